/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Every configuration key, declared once. Includers define the three
 * macros they need; the table then expands into the Conf struct, the
 * defaults, the GKeyFile parser with its range checks, the SIGUSR1 dump,
 * the shipped preload.conf and the key list of preload.conf(5).
 *
 *   CONF_INT  (group, key, default, min, max, unit, doc)
 *   CONF_BOOL (group, key, default, doc)
 *   CONF_LIST (group, key, default, doc)   ';'-separated path prefixes
 *   CONF_STRING (group, key, default, doc) a path; "" means off
 *
 * No include guard: it is meant to be included several times.
 */

CONF_INT(model, cycle, 20, 1, 3600, "seconds",
	"How often preload scans the running processes and predicts. A scan "
	"and prediction happen at the start of each cycle, the model update "
	"and the readahead half a cycle later (to give new processes time to "
	"map their libraries). Shorter cycles react faster and cost more CPU.")

CONF_BOOL(model, usecorrelation, TRUE,
	"Whether to weigh each pair's prediction by the correlation of the two "
	"executables' running times. Pairs that run independently then add "
	"nothing.")

CONF_BOOL(model, basemax, TRUE,
	"Whether the chains in which neither executable runs bid once per "
	"executable, the largest of their bids, instead of once each as in "
	"preload 0.6.4. Each of them estimates how often the executable "
	"starts with nothing related running; counted once per chain, that "
	"one rate grew with the number of chains and outbid the chains of "
	"the programs running now. false: 0.6.4's scoring.")

CONF_BOOL(model, lift, TRUE,
	"Whether a chain in which one executable runs bids for the other, "
	"not damped by the correlation, how much more likely it is to start "
	"now than while neither runs. Programs that follow one another (a "
	"script and the interpreter it runs as it ends) seldom run together, "
	"and the correlation cut their chains' bids to almost nothing; "
	"unrelated programs gain nothing from this. false: 0.6.4's scoring.")

CONF_BOOL(model, successor, TRUE,
	"Whether the programs that followed the last program started, in the "
	"order programs start, bid for being the next: how often each was the "
	"next start after it, times the chance of a start within the next "
	"cycle and a half. Users launch applications in habits that this "
	"order shows even when the programs never run together.")

CONF_BOOL(model, frequency, TRUE,
	"Whether a second expert, each program's share of all starts, is "
	"mixed into the bids, with a weight learned from how well each of "
	"the two foretold the starts seen so far. Where the order of starts "
	"says little (programs that follow no other), the programs started "
	"most often are prefetched; where it says much, the model's own bids "
	"count.")

CONF_INT(model, minsize, 2000000, 0, G_GINT64_CONSTANT(1) << 40, "bytes",
	"Smallest total size of accepted maps for an executable to be "
	"modelled. Smaller programs load fast anyway; they are remembered as "
	"too small and checked again after `autosave` seconds.")

CONF_INT(model, memtotal, -10, -100, 100, "percent",
	"The memory budget for prefetching, in KB, is "
	"max(0, memtotal% of MemTotal + memfree% of MemFree + memavailable% "
	"of MemAvailable) + memcached% of Cached, from /proc/meminfo, "
	"recomputed every cycle. This key is the MemTotal term; a negative "
	"percentage subtracts.")

CONF_INT(model, memfree, 50, -100, 100, "percent",
	"The MemFree term of the memory budget (see memtotal).")

CONF_INT(model, memcached, 0, -100, 100, "percent",
	"The Cached term of the memory budget (see memtotal).")

CONF_INT(model, memavailable, 0, -100, 100, "percent",
	"The MemAvailable term of the memory budget (see memtotal). "
	"MemAvailable is free memory plus what the kernel can reclaim "
	"without swapping, mostly clean page cache. On a machine whose memory "
	"is full of cache MemFree stays small and the default budget shrinks "
	"to nothing although the cache could make room; memfree = 0 with "
	"memavailable = 50 then budgets from the memory really available. "
	"The default 0 keeps the budget of preload 0.6.4.")

CONF_INT(model, halflife, 168, 0, 87600, "hours",
	"How fast old observations fade: every count and running time of the "
	"model weighs half after this many hours of model time (time preload "
	"ran), a quarter after twice as long, and pairs of executables whose "
	"evidence has faded are forgotten, so the model follows changing "
	"habits. 0 keeps everything forever, as preload 0.6.4 did.")

CONF_INT(model, maxage, 90, 0, 36500, "days",
	"Executables not seen running for this many days of model time are "
	"forgotten, with everything learned about them. 0 keeps them forever. "
	"Executables whose file is gone are forgotten at once.")

CONF_INT(model, follow, 1800, 0, 86400, "seconds",
	"Two executables get a Markov chain when they first run together, or "
	"when one starts at most this many seconds after the other stopped, "
	"with at most one other stop in between (0: in the same cycle). Pairs "
	"that never do have no chain and count as unrelated: memory and work "
	"grow with the pairs that matter, not with the square of the number of "
	"executables.")

CONF_BOOL(model, allpairs, FALSE,
	"Keep a chain for every pair of executables from the moment the second "
	"one is seen, as preload 0.6.4 did. Costs memory, state file and CPU "
	"that grow with the square of the number of executables; meant for "
	"comparisons.")

CONF_INT(model, maxexes, 2048, 16, 1000000, "executables",
	"The most executables the model keeps. A desktop used for months "
	"knows one to two hundred; 2048 leaves room for ten times that and "
	"holds, with their chains, some 10 MB (the cost-at-scale benchmark: "
	"9 MB of memory at 1,000 executables). When the model is full, a new "
	"executable first evicts the 1/16 of the cap not running and last seen "
	"running longest ago (the order in which maxage forgets them); a "
	"model full of running executables admits no more until some stop. "
	"The cap is what keeps a local user who runs thousands of distinct "
	"programs from growing the daemon's memory and state file without "
	"bound.")

CONF_INT(model, maxexemaps, 2048, 16, 1000000, "maps",
	"The most file ranges (maps) one executable uses. A large program "
	"maps some hundred files, and learning the touched parts of large "
	"mappings (usedmapkb) and the files read at start-up (maxreadfiles, "
	"256) adds a few hundred more. Further ranges are not learned; a "
	"range the program stops mapping leaves after three runs and makes "
	"room. A program that maps one library in 30,000 windows would "
	"otherwise add 30,000 maps (9 MB of memory, a second to load).")

CONF_INT(model, maxmaps, 65536, 16, 10000000, "maps",
	"The most file ranges in the whole model. A desktop's model holds one "
	"to two thousand; at about 300 bytes each in memory and 60 in the "
	"state file the default bounds them to some 20 MB and 4 MB. When "
	"full, new ranges are refused, and at the next model update the "
	"executables that do not run are evicted in maxexes' order until a "
	"sixteenth of the cap is free.")

CONF_INT(model, maxchains, 65536, 16, 10000000, "chains",
	"The most Markov chains (pairs of executables) the model keeps. A "
	"desktop's model holds about 30 per executable, 3,000 for 100 "
	"executables; a chain costs about 170 bytes, so the default bounds "
	"them to some 11 MB. When full, a new chain first evicts the sixteenth "
	"of the cap whose heaviest count is lightest (the chains aging would "
	"forget first), keeping those whose pair runs now to the last.")

CONF_BOOL(system, doscan, TRUE,
	"Whether to scan running processes and update the model. Turn off "
	"to freeze what has been learned.")

CONF_BOOL(system, dopredict, TRUE,
	"Whether to predict and read files ahead. Turn off to only learn.")

CONF_INT(system, autosave, 3600, 60, 86400 * 7, "seconds",
	"How often the state is saved (it is also saved on exit and on "
	"SIGUSR2). Executables found too small are forgotten this often too.")

CONF_LIST(system, mapprefix,
	"!/proc/;!/sys/;!/dev/;!/run/;!/tmp/;!/var/tmp/;"
	"/usr/;/lib;/opt/;/snap/;/var/lib/snapd/snap/;/var/lib/flatpak/;/nix/store/;/var/cache/;!/",
	"Which mapped files to learn and prefetch: a ';'-separated list of "
	"path prefixes, tried in order; the first that matches decides, a "
	"leading '!' rejects. A path no prefix matches is accepted; an empty "
	"list accepts everything, so end the list with !/ to reject the rest. "
	"Prefixes are raw: /lib also matches /lib64. The paths are those that "
	"reach the files from preload's mount namespace: a Flatpak's /usr and "
	"/app are matched as the directories under /var/lib/flatpak/ they are, "
	"a Snap's files as /snap/NAME/REV/... (doc/namespaces.md). The default "
	"covers the system (/usr, /lib), /opt, Snap (/snap, or "
	"/var/lib/snapd/snap where /snap is a link), system-wide Flatpak, "
	"the Nix store and /var/cache (font and linker caches), and rejects "
	"what must never be read: /proc, /sys, /dev (and /dev/shm), /run and "
	"the temporary directories. Home directories are not covered, so "
	"per-user Flatpak installs (~/.local/share/flatpak) are not learned "
	"by default: every name there is chosen by a user, who could make a "
	"root daemon learn, keep and read files of their choosing, and homes "
	"are often on network, FUSE or encrypted file systems that may stop "
	"answering or be locked. /etc is not covered either, though reading "
	"it ahead is harmless (no user can create a name there): with it, "
	"the launch benchmark's Writer and Firefox started no faster "
	"(doc/benchmarks.md). Add /home/NAME/.local/share/flatpak/ to "
	"mapprefix and exeprefix for a user whose applications should be "
	"learned.")

CONF_INT(system, usedmapkb, 1024, 0, G_GINT64_CONSTANT(1) << 30, "KB",
	"A mapped range larger than this many KB is learned as the parts of it "
	"the program has touched (its pages present in /proc/PID/pagemap when "
	"its maps are read, in 64 KiB windows of the file), not whole: "
	"programs map large files (a class library, a big binary, a locale "
	"archive) and use a small part of them. Smaller ranges are learned "
	"whole. 0 learns every range whole, as preload 0.6.4 did. Without root "
	"the pages of other users' processes cannot be asked for: their ranges "
	"are learned whole.")

CONF_LIST(system, exeprefix,
	"!/usr/sbin/;!/usr/local/sbin/;!/proc/;!/sys/;!/dev/;!/run/;!/tmp/;!/var/tmp/;"
	"/usr/;/opt/;/snap/;/var/lib/snapd/snap/;/var/lib/flatpak/;/nix/store/;!/",
	"Which executables to learn, as a prefix list like mapprefix, matched "
	"against the path that reaches the program's file from preload's mount "
	"namespace. The default covers /usr (but not the sbin directories: "
	"daemons, not applications people wait for), /opt, Snap, system-wide "
	"Flatpak and the Nix store; home directories are not covered, for the "
	"reasons given under mapprefix.")

CONF_INT(system, maxprocs, 30, 0, 1024, "threads",
	"How many readahead requests run at once, in worker threads. 0 (or 1) "
	"runs them one by one, in the batch's own thread: never in the daemon's "
	"main thread, which a file system that stops answering would hold. The "
	"old spelling `processes` is accepted.")

CONF_INT(system, sortstrategy, 3, 0, 3, "",
	"Order of readahead requests: 0 none (for flash storage), 1 by path, "
	"2 by inode, 3 by the file's first physical block (FIEMAP), which "
	"minimises seeks on rotating disks.")

CONF_INT(system, slicekb, 32768, 0, G_GINT64_CONSTANT(1) << 32, "KB",
	"The readahead reads the selected maps most likely first, in slices "
	"of at most this many KB, and orders each slice by sortstrategy; a "
	"map larger than a slice is one slice. The files of the program most "
	"likely to start are then cached first, and a newer prediction that "
	"supersedes a readahead still running (at the next cycle, on a slow "
	"disk) loses only what the older one had not reached. 0 sorts the "
	"whole selection by sortstrategy, as preload 0.6.4 did, which saves "
	"the most seeks on a rotating disk.")

CONF_INT(system, execpause, 1000, 0, 60000, "ms",
	"When the fanotify watch sees a known program start that has not run "
	"for two cycles (a launch), the readahead for predictions starts no "
	"new read (reads in flight complete, a read in chunks stops at its "
	"next chunk) for the start-up window (startupwindow) or this long, "
	"whichever is longer, from the start itself: the program's own reads "
	"then do not queue behind prefetching on a disk whose scheduler "
	"serves every I/O class alike (none or mq-deadline, throttled "
	"groups). If the program's learned set then proves cached (at most a "
	"tenth of it missing, as for launchfetchkb), the pause ends after "
	"this long. Programs run over and over (a compiler "
	"during a build) and programs not yet learned do not pause it, and "
	"launches pause it for at most 30 s at a stretch, then at most half "
	"of the time. 0 (with launchfetchkb 0) turns it off. Without the "
	"watch (learnreads and learnexec off, or no permission) starts are "
	"not seen and nothing pauses.")

CONF_BOOL(system, checkresidency, TRUE,
	"Whether to ask the kernel which pages of a range are already in the "
	"page cache (cachestat(2), or mincore(2) on kernels before 6.5) and "
	"read only the missing ones. A range that is fully cached then costs "
	"no read at all. Turn off to request every selected range every "
	"cycle, as preload 0.6.4 did.")

CONF_BOOL(system, trustvmstat, TRUE,
	"With checkresidency, whether a file that the last full check (at "
	"most a minute ago) found cached is taken as cached, without opening "
	"it, for as long as the kernel's counts of reclaimed pages and cache "
	"drops in /proc/vmstat have not changed; a stat still checks that it "
	"is the same file. Otherwise it is opened and spot-checked every "
	"cycle. Pages a program drops with POSIX_FADV_DONTNEED move no "
	"count: with this on they are read again up to a minute later, not "
	"at the next cycle. Turn off where programs evict others' files that "
	"way.")

CONF_BOOL(system, warmdirs, TRUE,
	"Whether a prefetch, after reading files that were not cached, also "
	"lists each directory holding one and looks up its entries (at most "
	"512 a directory, no symbolic link followed). A cold start looks up "
	"many more paths than it opens, and each lookup of a cold directory "
	"or inode is a small read of its own: on a desktop program these "
	"were most of the requests of a cold start. Costs nothing in a cycle "
	"whose files are already cached. Turn off to read file contents "
	"only.")

CONF_INT(system, minavailable, 5, 0, 100, "percent",
	"No prefetching while MemAvailable in /proc/meminfo is below this "
	"percentage of MemTotal: reading more into the cache would only push "
	"other pages out. Learning and prediction go on. 0 turns the check "
	"off.")

CONF_INT(system, maxpressure, 10, 0, 100, "percent",
	"No prefetching while the memory pressure the kernel reports is above "
	"this percentage: the \"some avg10\" figure of /proc/pressure/memory, "
	"the share of the last 10 seconds in which some task waited for "
	"memory. Kernels without pressure information (before 4.20, or booted "
	"with psi=0) are judged by minavailable alone. 0 turns the check off.")

CONF_INT(system, batterybudget, 0, 0, 100, "percent",
	"How much of the memory budget to prefetch while the machine runs on "
	"its battery (read from /sys/class/power_supply once a cycle; a "
	"machine without a battery, or with only a UPS, is always on AC). The "
	"default 0 reads nothing on battery: every prefetch wakes the disk "
	"for reads that may never be used, and on battery the user wants "
	"the runtime more than a faster start. Learning and prediction go "
	"on, as while memory is short, and prefetching resumes on AC. "
	"Between 1 and 99 prefetch less (the budget is scaled down); 100 "
	"ignores the power source.")

CONF_STRING(system, tracefile, "",
	"Record what each scan observes (running executables, the maps of new "
	"ones, the memory figures) to this file, for preload-replay(1) and "
	"benchmarks; see doc/trace-format.md. The file is rewritten when the "
	"daemon starts. Empty: no trace. The --trace option overrides it.")

CONF_BOOL(system, learnreads, TRUE,
	"Whether to learn the files each program opens while it starts (its "
	"first `startupwindow` seconds), with fanotify, on the file systems "
	"that mapprefix and exeprefix cover. The resident parts of those files "
	"join the program's maps in prediction and readahead. Needs root and "
	"fanotify (Linux 5.1 or later); without them preload logs it once and "
	"learns from /proc maps only.")

CONF_BOOL(system, learnexec, TRUE,
	"Whether program starts seen through fanotify count in the model: a "
	"program that ran since the last scan counts as running at that scan, "
	"even if it lived a fraction of a second, and an unknown one is "
	"admitted from the files it opened while starting. So a compiler that "
	"a build runs over and over is predicted while the build runs. With "
	"learnreads off, exec events still count starts of known programs.")

CONF_BOOL(system, netfs, FALSE,
	"Whether files on network and FUSE file systems (NFS, CIFS/SMB, 9p, "
	"Ceph, AFS, sshfs, AppImage's squashfuse and every other FUSE mount) "
	"are watched. Such a file lives on a server, a process or a machine, "
	"that may stop answering, and anything that touches it then waits as "
	"long as the server does. Off: those file systems are not marked, and "
	"an event of a file on one is dropped and counted in the SIGUSR1 dump. "
	"On: they are watched by a group of their own that one thread marks "
	"and reads, never the main loop; a thread that waits on a dead server "
	"for more than 2 s is reported stuck in the dump and not waited for, "
	"at exit included. A SIGHUP meanwhile starts no second thread: "
	"marking the file systems again waits until the stuck one returns. "
	"Their files seen mapped are learned without a stat (a large mapping "
	"is cut to its touched pages within the pagemap budget, its file's "
	"size unknown), and checked and read only on workers with deadlines.")

CONF_INT(system, startupwindow, 5, 1, 600, "seconds",
	"How long after a program starts its opens are learned (see "
	"learnreads). At most one start of each program is followed per "
	"cycle.")

CONF_INT(system, maxreadfiles, 256, 0, 65536, "files",
	"The most files learned from start-up opens per program, over all its "
	"starts; also the most files recorded per start. 0 learns none.")

CONF_INT(system, maxreadkb, 65536, 0, G_GINT64_CONSTANT(1) << 30, "KB",
	"The most bytes (in KB) of files learned from start-up opens per "
	"program, over all its starts.")

CONF_INT(system, launchfetchkb, 131072, 0, G_GINT64_CONSTANT(1) << 32, "KB",
	"When the fanotify watch sees a known program start and more than a "
	"tenth of what it learned the program loads (its maps and start-up "
	"reads) is not in the page cache, that set is read at once, up to "
	"this much of it (most used maps first), in on-disk order and large "
	"requests (a file's learned ranges merged across gaps of up to 256 "
	"KiB) beside the program's own reads. Files whose learned part is "
	"under 256 KiB are left to the program: a disk limited by requests "
	"charges their prefetch the request the program's own read costs. "
	"With checkresidency, only runs of at least 256 KiB of missing pages "
	"are read, each chunk looked at again just before: the program reads "
	"the same files meanwhile, and the holes it leaves would each cost "
	"a request. "
	"execpause does not hold these reads, and prefetching for predictions "
	"waits for them (and, at a launch, for the start-up window: see "
	"execpause). At most once per program per "
	"cycle, and at most 4 such reads at once, then one per second. 0 "
	"turns it off.")
