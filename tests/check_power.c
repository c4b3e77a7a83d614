/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests for src/power.c: the AC/battery rule on parsed entries, and the
 * reader on fake /sys trees (a desktop, a laptop on AC and on battery, a
 * UPS, a USB-PD charger, a peripheral's battery, unreadable files), and
 * that it reads at most once per stamp.
 */
#include "config.h"

#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "power.h"

static char *tmpdir;

static void
setup(void)
{
	tmpdir = tu_make_tempdir();
}

static void
teardown(void)
{
	tu_rm_rf(tmpdir);
	g_clear_pointer(&tmpdir, g_free);
}

/* ---- the rule, on parsed entries ---- */

#define MAX_SUPPLIES 4

static const struct {
	const char *name;
	PowerSupply supplies[MAX_SUPPLIES];
	gsize n;
	PowerSource want;
} decide_cases[] = {
	{ "desktop: no supplies", { { 0 } }, 0, POWER_AC },
	{ "laptop on AC, charging",
	  { { "Mains", NULL, NULL, 1 }, { "Battery", "Charging", "System", -1 } }, 2, POWER_AC },
	{ "laptop on AC, full",
	  { { "Mains", NULL, NULL, 1 }, { "Battery", "Full", NULL, -1 } }, 2, POWER_AC },
	{ "laptop on battery",
	  { { "Mains", NULL, NULL, 0 }, { "Battery", "Discharging", "System", -1 } }, 2,
	  POWER_BATTERY },
	/* Charge thresholds: on AC, not charging. */
	{ "laptop on AC, not charging",
	  { { "Mains", NULL, NULL, 1 }, { "Battery", "Not charging", NULL, -1 } }, 2, POWER_AC },
	/* A weak charger: the battery drains, but the mains is online. */
	{ "mains online, battery discharging",
	  { { "Mains", NULL, NULL, 1 }, { "Battery", "Discharging", NULL, -1 } }, 2, POWER_AC },
	{ "battery alone, discharging", { { "Battery", "Discharging", NULL, -1 } }, 1, POWER_BATTERY },
	{ "battery alone, unknown status", { { "Battery", "Unknown", NULL, -1 } }, 1, POWER_AC },
	{ "mains offline, battery status unknown",
	  { { "Mains", NULL, NULL, 0 }, { "Battery", "Unknown", NULL, -1 } }, 2, POWER_BATTERY },
	{ "mains offline, battery status unreadable",
	  { { "Mains", NULL, NULL, 0 }, { "Battery", NULL, NULL, -1 } }, 2, POWER_BATTERY },
	{ "mains online unreadable, battery unknown",
	  { { "Mains", NULL, NULL, -1 }, { "Battery", "Unknown", NULL, -1 } }, 2, POWER_AC },
	{ "desktop with a mains entry only", { { "Mains", NULL, NULL, 0 } }, 1, POWER_AC },
	/* A UPS on its battery is a power cut, not a laptop. */
	{ "desktop on a UPS, discharging",
	  { { "UPS", "Discharging", NULL, -1 } }, 1, POWER_AC },
	{ "desktop with mains offline and a UPS",
	  { { "Mains", NULL, NULL, 0 }, { "UPS", "Discharging", NULL, -1 } }, 2, POWER_AC },
	/* The battery of a wireless mouse. */
	{ "desktop, peripheral battery discharging",
	  { { "Battery", "Discharging", "Device", -1 } }, 1, POWER_AC },
	{ "laptop on battery with a mouse",
	  { { "Battery", "Discharging", "Device", -1 }, { "Battery", "Discharging", "System", -1 } },
	  2, POWER_BATTERY },
	/* USB-PD: the port that charges is online, the other is not. */
	{ "USB-PD charger",
	  { { "USB", NULL, NULL, 0 }, { "USB", NULL, NULL, 1 },
	    { "Battery", "Charging", NULL, -1 } }, 3, POWER_AC },
	{ "USB-PD, both ports offline",
	  { { "USB", NULL, NULL, 0 }, { "USB", NULL, NULL, 0 },
	    { "Battery", "Discharging", NULL, -1 } }, 3, POWER_BATTERY },
	{ "old kernel USB_PD online",
	  { { "USB_PD", NULL, NULL, 1 }, { "Battery", "Discharging", NULL, -1 } }, 2, POWER_AC },
	/* online = 2: some USB chargers, online with a programmable voltage. */
	{ "USB online 2", { { "USB", NULL, NULL, 2 }, { "Battery", "Discharging", NULL, -1 } }, 2,
	  POWER_AC },
	{ "wireless charger",
	  { { "Wireless", NULL, NULL, 1 }, { "Battery", "Charging", NULL, -1 } }, 2, POWER_AC },
	{ "unknown type", { { "Quantum", "Discharging", NULL, 0 } }, 1, POWER_AC },
};

START_TEST(test_power_decide)
{
	ck_assert_msg(power_decide(decide_cases[_i].supplies, decide_cases[_i].n) ==
		      decide_cases[_i].want, "case: %s", decide_cases[_i].name);
}
END_TEST

START_TEST(test_power_names)
{
	ck_assert_str_eq(power_source_name(POWER_AC), "on AC");
	ck_assert_str_eq(power_source_name(POWER_BATTERY), "on battery");
}
END_TEST

/* ---- the reader, on fake trees ---- */

/* Writes SYSROOT/class/power_supply/NAME/FILE = text followed by a newline. */
static void
put(const char *name, const char *file, const char *text)
{
	g_autofree char *path = g_build_filename(tmpdir, "class", "power_supply", name, file, NULL);
	g_autofree char *line = g_strconcat(text, "\n", NULL);

	tu_write_file(path, line);
}

static PowerSource
read_tree(void)
{
	g_autoptr(Power) power = power_new(tmpdir);

	return power_get(power, 1);
}

START_TEST(test_power_no_tree)
{
	/* No class/power_supply at all: a machine without supplies. */
	ck_assert_int_eq(read_tree(), POWER_AC);
}
END_TEST

START_TEST(test_power_empty_tree)
{
	g_autofree char *dir = g_build_filename(tmpdir, "class", "power_supply", NULL);

	ck_assert_int_eq(g_mkdir_with_parents(dir, 0755), 0);
	ck_assert_int_eq(read_tree(), POWER_AC);
}
END_TEST

START_TEST(test_power_laptop)
{
	/* As a ThinkPad lists them: AC, BAT0, and the USB-C port (ucsi). */
	put("AC", "type", "Mains");
	put("AC", "online", "1");
	put("BAT0", "type", "Battery");
	put("BAT0", "status", "Charging");
	put("BAT0", "scope", "System");
	put("ucsi-source-psy-USBC000:001", "type", "USB");
	put("ucsi-source-psy-USBC000:001", "online", "0");
	ck_assert_int_eq(read_tree(), POWER_AC);

	put("AC", "online", "0");
	put("BAT0", "status", "Discharging");
	ck_assert_int_eq(read_tree(), POWER_BATTERY);

	/* Plugged in through USB-C instead. */
	put("ucsi-source-psy-USBC000:001", "online", "1");
	ck_assert_int_eq(read_tree(), POWER_AC);
}
END_TEST

START_TEST(test_power_ups)
{
	put("ups0", "type", "UPS");
	put("ups0", "status", "Discharging");
	put("ups0", "online", "0");
	ck_assert_int_eq(read_tree(), POWER_AC);
}
END_TEST

START_TEST(test_power_peripheral)
{
	put("hidpp_battery_0", "type", "Battery");
	put("hidpp_battery_0", "status", "Discharging");
	put("hidpp_battery_0", "scope", "Device");
	ck_assert_int_eq(read_tree(), POWER_AC);
}
END_TEST

START_TEST(test_power_usb_pd)
{
	put("BAT1", "type", "Battery");
	put("BAT1", "status", "Discharging");
	put("tcpm-source-psy-4-0022", "type", "USB");
	put("tcpm-source-psy-4-0022", "online", "0");
	ck_assert_int_eq(read_tree(), POWER_BATTERY);
	put("tcpm-source-psy-4-0022", "online", "1");
	ck_assert_int_eq(read_tree(), POWER_AC);
}
END_TEST

/* Files that cannot be read as files (a directory where a file should be). */
static void
put_unreadable(const char *name, const char *file)
{
	g_autofree char *path = g_build_filename(tmpdir, "class", "power_supply", name, file, NULL);

	ck_assert_int_eq(g_mkdir_with_parents(path, 0755), 0);
}

START_TEST(test_power_unreadable)
{
	g_autofree char *ac_online = g_build_filename(tmpdir, "class", "power_supply", "AC",
						      "online", NULL);
	g_autofree char *bat_status = g_build_filename(tmpdir, "class", "power_supply", "BAT0",
						       "status", NULL);

	/* A supply whose type cannot be read is skipped. */
	put_unreadable("weird", "type");
	put("weird", "status", "Discharging");
	ck_assert_int_eq(read_tree(), POWER_AC);

	/* Mains online unreadable, battery discharging: on battery. */
	put("AC", "type", "Mains");
	put_unreadable("AC", "online");
	put("BAT0", "type", "Battery");
	put("BAT0", "status", "Discharging");
	ck_assert_int_eq(read_tree(), POWER_BATTERY);

	/* Mains offline and the battery's status unreadable: on battery. */
	tu_rm_rf(ac_online);
	put("AC", "online", "0");
	tu_rm_rf(bat_status);
	put_unreadable("BAT0", "status");
	ck_assert_int_eq(read_tree(), POWER_BATTERY);

	/* Garbage in online counts as unknown, not online. */
	put("AC", "online", "yes");
	ck_assert_int_eq(read_tree(), POWER_AC);
}
END_TEST

/* One reading per stamp: a cycle that asks twice reads once. */
START_TEST(test_power_stamp)
{
	g_autoptr(Power) power = power_new(tmpdir);

	put("BAT0", "type", "Battery");
	put("BAT0", "status", "Discharging");
	ck_assert_int_eq(power_reads(power), 0);
	ck_assert_int_eq(power_get(power, 7), POWER_BATTERY);
	ck_assert_int_eq(power_reads(power), 1);

	/* Plugged in within the cycle: not seen until the next stamp. */
	put("BAT0", "status", "Charging");
	ck_assert_int_eq(power_get(power, 7), POWER_BATTERY);
	ck_assert_int_eq(power_reads(power), 1);
	ck_assert_int_eq(power_get(power, 8), POWER_AC);
	ck_assert_int_eq(power_reads(power), 2);
	ck_assert_int_eq(power_get(power, 8), POWER_AC);
	ck_assert_int_eq(power_reads(power), 2);
}
END_TEST

static Suite *
power_suite(void)
{
	Suite *s = suite_create("power");
	TCase *tc = tcase_create("power");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_power_decide, 0, G_N_ELEMENTS(decide_cases));
	tcase_add_test(tc, test_power_names);
	tcase_add_test(tc, test_power_no_tree);
	tcase_add_test(tc, test_power_empty_tree);
	tcase_add_test(tc, test_power_laptop);
	tcase_add_test(tc, test_power_ups);
	tcase_add_test(tc, test_power_peripheral);
	tcase_add_test(tc, test_power_usb_pd);
	tcase_add_test(tc, test_power_unreadable);
	tcase_add_test(tc, test_power_stamp);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run_suite(power_suite());
}
