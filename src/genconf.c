#include "config.h"
#include <stdio.h>
#include "conf.h"
int main(void) { return 0; }
