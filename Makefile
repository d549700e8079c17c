# SPDX-License-Identifier: MIT
# hrt - high-resolution range timers.  Plain GNU make.
#
#   make                 libhrt.a, libhrt.so, the hrt tool
#   make test            build and run every test, and check the layering
#                        (tests/check_layers.sh; SANITIZE=1: ASan+UBSan,
#                        SANITIZE=thread: TSan; VERIFY=1: the library
#                        checks its own invariants; each in its own build dir)
#   make demo            hrt demo, replay of the shipped trace, a sim sweep
#   make bench           engine, wake-up and shape benchmarks (bench/*.c)
#   make bench-peers     hrt against libev, libuv, libevent, sd-event, then
#                        bench-windows, into $(O)/perf (PERF_DIR); make
#                        bench-peers-docs: into the tracked docs/perf
#   make bench-windows   range timers (windows 0-100 %, three expiry
#                        distributions, the tail of one op) against libev
#   make bench-shapes    one op in the shapes servers make (the timer due
#                        first re-armed; random, FIFO, LRU; a periodic
#                        restart into a big slot) on a virtual base and
#                        through the fd, each against its target:
#                        $(O)/perf/shapes.txt, shapes.csv; make
#                        bench-shapes-docs: into the tracked docs/perf
#   make bench-coalesce-docs  (root) interrupts hrt adds, timerfd against the
#                        coalesced sleep, in hrt_base_loop, libuv and libev:
#                        docs/perf/coalesce.txt, coalesce-uv.txt, coalesce-ev.txt
#   make bench-slack-docs  (root) hrt slack --measure on 8 sleepers:
#                        docs/perf/slack-measure.txt
#   make docs-replay     the shipped trace's verdict: docs/perf/replay-verdict.txt
#   make bench-before-after  hrt at 64f2832 (BASE=...) against now
#   make bench-callgrind instructions and D1 misses per op (valgrind)
#   make bench-floor     the memory floor and each op's distance to it
#   make examples        the event-loop integrations in examples/
#   make fuzz            libFuzzer (clang) harnesses, FUZZ_SECONDS each
#   make abi-check       libhrt.so's ABI against abi/libhrt.so.N.abi (abidiff)
#   make abi-baseline    writes that baseline (a new soname, a release)
#   make deb             Debian packages into $(O)/deb, lintian, autopkgtest
#   make install PREFIX=/usr/local [DESTDIR=...]   (hrt.pc and the CMake
#                        package written then, for that PREFIX/LIBDIR; man
#                        pages to MANDIR; the host-loop glue to EXAMPLESDIR;
#                        ldconfig when root, no DESTDIR, and LIBDIR one
#                        the dynamic linker searches)
#   make uninstall       the same files, and hrt's own directories if empty
#
# The library, the tool and the core tests need only a C toolchain.  Optional
# packages (libuv1-dev, libev-dev, libsystemd-dev, xz-utils, graphviz, ...)
# are probed; what needs a missing one is not built, and `make test` reports
# it as skipped, naming the package.  The results are kept in $(O)/config.mk:
# installing or removing a package rebuilds what it changes.

VERSION := $(shell sed -n 's/^\#define HRT_VERSION_STRING "\(.*\)"/\1/p' include/hrt.h)
# The ABI's number, bumped when the ABI changes, not with the version's
# major number (0.2.0 broke the ABI of 0.1.0: libhrt.so.1; 1.0.0, 1.1.0 and 1.2.0 keep it).
SOVERSION := 1

PREFIX       ?= /usr/local
EXEC_PREFIX  ?= $(PREFIX)
BINDIR       ?= $(EXEC_PREFIX)/bin
LIBDIR       ?= $(EXEC_PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
CMAKEDIR     ?= $(LIBDIR)/cmake/hrt
MANDIR       ?= $(PREFIX)/share/man
# The host-loop glue README points to (examples/uv_plan.h, uv_host.h,
# ev_host.h): not installed headers (hrt.h is the only one) but examples
# to copy.
DOCDIR       ?= $(PREFIX)/share/doc/hrt
EXAMPLESDIR  ?= $(DOCDIR)/examples
HOST_GLUE    := examples/uv_plan.h examples/uv_host.h examples/ev_host.h

CC      ?= cc
CFLAGS  ?= -O2 -g
LDFLAGS ?=
WARN     = -Wall -Wextra -Werror
HRT_CFLAGS  = -std=c11 -D_GNU_SOURCE $(WARN) -Iinclude -Isrc -pthread -fPIC
HRT_LDLIBS  = -pthread -lm

SANITIZE ?=
ifeq ($(SANITIZE),thread)
  SAN_FLAGS = -fsanitize=thread -fno-omit-frame-pointer
  O ?= build-tsan
else ifneq ($(SANITIZE),)
  SAN_FLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
  O ?= build-asan
else
  O ?= build
endif
# VERIFY=1: the library checks its own invariants (src/verify.h: the lock
# at every "lock held", the timer set after every change) and aborts with
# the rule on a failure; in a build dir of its own.
VERIFY ?=
ifneq ($(VERIFY),)
  SAN_FLAGS += -DHRT_VERIFY
  ifeq ($(origin O),file)       # not one given by the caller (or a test)
    O := $(O)-verify
  endif
endif
ALL_CFLAGS  = $(HRT_CFLAGS) $(CPPFLAGS) $(CFLAGS) $(SAN_FLAGS)
ALL_LDFLAGS = $(LDFLAGS) $(SAN_FLAGS)

LIB_SRCS  := $(wildcard src/*.c)
LIB_OBJS  := $(LIB_SRCS:src/%.c=$(O)/src/%.o)
LIB_A     := $(O)/libhrt.a
LIB_SO    := $(O)/libhrt.so.$(VERSION)

# The hrt command: tools/cmd/hrt.c holds main(), the rest is shared with the
# fuzz harnesses and tests through $(O)/libtools.a.  tools/ has a folder per
# concept (cmd: the commands; trace: reading traces; replay: the model and
# what it prints; live: tracing live, top; apply: setting slack on
# processes; sim, demo; common: output files, text, SVG); a file includes
# another folder's header by its relative path ("../trace/trace.h").
TOOL_HDRS := $(wildcard tools/*/*.h)
TOOL_SRCS := $(filter-out tools/cmd/hrt.c,$(wildcard tools/*/*.c))
TOOL_OBJS := $(TOOL_SRCS:tools/%.c=$(O)/tools/%.o)
TOOL_A    := $(O)/libtools.a
HRT_BIN   := $(O)/hrt

TEST_SRCS := $(wildcard tests/test_*.c)
TEST_BINS := $(TEST_SRCS:tests/%.c=$(O)/tests/%)

FUZZ_SRCS   := $(filter-out fuzz/fuzz_main.c,$(wildcard fuzz/fuzz_*.c))
FUZZ_REPLAY := $(FUZZ_SRCS:fuzz/%.c=$(O)/fuzz/%-replay)
FUZZ_BINS   := $(FUZZ_SRCS:fuzz/%.c=build-fuzz/%)
FUZZ_SECONDS ?= 20

BENCH_SRCS := $(wildcard bench/*.c)
BENCH_BINS := $(BENCH_SRCS:bench/%.c=$(O)/bench/%)

# Examples build beside their sources and link the host loop's library.
EXAMPLE_SRCS := $(wildcard examples/*.c)
EXAMPLE_BINS := $(EXAMPLE_SRCS:%.c=%)
EXLIBS_uv_timers      = $(shell pkg-config --libs libuv 2>/dev/null || echo -luv)
EXLIBS_ev_timers      = -lev
EXLIBS_sdevent_timers = $(shell pkg-config --libs libsystemd 2>/dev/null || echo -lsystemd)
EXLIBS_epoll_timers   =
EXLIBS_uv_cross_thread = $(EXLIBS_uv_timers)
EXLIBS_uv_echo         = $(EXLIBS_uv_timers)
EXLIBS_ev_cross_thread = $(EXLIBS_ev_timers)

# Optional packages, probed once per make run: $(call have_lib,HEADER,FUNC,LIBS)
# is "y" when a program including HEADER and calling FUNC links with LIBS
# (a call, so an empty header or library does not pass for the package).
HASH := \#
# The probe links to a temporary file: as root, `cc -o /dev/null` replaces
# the device with a regular file.
have_lib = $(shell t=$$(mktemp) && { printf '$(HASH)include <%s>\nint main(void) { return (void (*)(void))%s == 0; }\n' \
	'$(1)' '$(2)' | $(CC) -x c - -o "$$t" $(3) >/dev/null 2>&1 && echo y; rm -f "$$t"; })
# Per example: the header it needs and the Debian package that ships it.
EXHDR_uv_timers      = uv.h
EXHDR_ev_timers      = ev.h
EXHDR_sdevent_timers = systemd/sd-event.h
EXFN_uv_timers       = uv_default_loop
EXFN_ev_timers       = ev_run
EXFN_sdevent_timers  = sd_event_default
EXPKG_uv_timers      = libuv1-dev
EXPKG_ev_timers      = libev-dev
EXPKG_sdevent_timers = libsystemd-dev
EXHDR_uv_cross_thread = uv.h
EXHDR_ev_cross_thread = ev.h
EXFN_uv_cross_thread  = uv_default_loop
EXFN_ev_cross_thread  = ev_run
EXPKG_uv_cross_thread = libuv1-dev
EXHDR_uv_echo         = uv.h
EXFN_uv_echo          = uv_default_loop
EXPKG_uv_echo         = libuv1-dev
EXPKG_ev_cross_thread = libev-dev
EXAMPLE_NAMES := $(EXAMPLE_SRCS:examples/%.c=%)
EXAMPLES_NEEDING := $(foreach e,$(EXAMPLE_NAMES),$(if $(EXPKG_$(e)),$(e)))
EXAMPLES_MISSING := $(foreach e,$(EXAMPLES_NEEDING),$(if $(call have_lib,$(EXHDR_$(e)),$(EXFN_$(e)),$(EXLIBS_$(e))),,$(e)))
EXAMPLES_OK      := $(filter-out $(EXAMPLES_MISSING),$(EXAMPLE_NAMES))
HAVE_LIBUV       := $(if $(filter uv_timers,$(EXAMPLES_MISSING)),,y)
HAVE_LIBEV       := $(if $(filter ev_timers,$(EXAMPLES_MISSING)),,y)
HAVE_XZ          := $(shell command -v xz >/dev/null 2>&1 && echo y)
# Live tracing (hrt top, hrt record --tracefs): libtracefs and libtraceevent.
TRACEFS_CFLAGS   := $(shell pkg-config --cflags libtracefs libtraceevent 2>/dev/null)
TRACEFS_LIBS     := $(shell pkg-config --libs libtracefs libtraceevent 2>/dev/null)
HAVE_TRACEFS     := $(call have_lib,tracefs.h,tracefs_iterate_raw_events,$(TRACEFS_CFLAGS) $(TRACEFS_LIBS))
TRACEFS_PKG      := libtracefs-dev libtraceevent-dev
# Examples that serve until stopped: make test runs each from a test of its
# own (uv_echo: tests/test_uv_echo.c, which skips by name without it).
EXAMPLE_SERVERS := uv_echo
# What `make test` cannot build, as NAME:PACKAGE for tests/run.sh.
TEST_SKIPPED := $(foreach e,$(filter-out $(EXAMPLE_SERVERS),$(EXAMPLES_MISSING)),$(e):$(EXPKG_$(e))) \
	$(if $(HAVE_LIBUV),,readme_uv:libuv1-dev)
ifeq ($(HAVE_TRACEFS),y)
  TOOL_LDLIBS = $(TRACEFS_LIBS)
$(O)/tools/live/live.o: HRT_CFLAGS += -DHAVE_TRACEFS $(TRACEFS_CFLAGS)
endif

# What the probes found and the library's flags, in $(O)/config.mk (read
# by nobody: a stamp).  It is
# rewritten only when a result changes, and what a result decides depends on
# it: installing or removing an optional package rebuilds those targets (the
# tool through live.o, the tests and replays through libtools.a) and nothing
# else, and the next `make test` runs what it skipped.
CONFIG := $(O)/config.mk
CONFIG_LINES := '\# hrt: the optional packages found (Makefile, "config.mk")' \
	'HAVE_TRACEFS = $(HAVE_TRACEFS)' 'TRACEFS_CFLAGS = $(TRACEFS_CFLAGS)' \
	'TRACEFS_LIBS = $(TRACEFS_LIBS)' 'HAVE_LIBUV = $(HAVE_LIBUV)' 'HAVE_LIBEV = $(HAVE_LIBEV)' \
	'EXLIBS_uv_timers = $(EXLIBS_uv_timers)' 'EXAMPLES_MISSING = $(EXAMPLES_MISSING)' \
	'LIB_FLAGS = $(ALL_CFLAGS)'
ifeq ($(filter clean,$(MAKECMDGOALS)),)
  $(shell mkdir -p $(O) && printf '%s\n' $(CONFIG_LINES) > $(CONFIG).$$$$ && \
    { cmp -s $(CONFIG).$$$$ $(CONFIG) && rm -f $(CONFIG).$$$$ || mv -f $(CONFIG).$$$$ $(CONFIG); })
endif
$(O)/tools/live/live.o $(O)/bench/coalesce: $(CONFIG)

.PHONY: all lib tools test check abi-check abi-baseline deb demo docs-replay bench-coalesce-docs bench-slack-docs bench bench-peers bench-peers-docs bench-windows bench-shapes bench-shapes-docs bench-before-after bench-callgrind bench-floor examples fuzz install uninstall clean
.DEFAULT_GOAL := all

all: lib tools

lib: $(LIB_A) $(LIB_SO)

tools: $(HRT_BIN)

# On $(CONFIG) too: its LIB_FLAGS line changes with the flags (VERIFY=1, a
# sanitizer) into a build dir the caller named, so no object of one build
# is linked with another's (struct hrt_base differs under VERIFY).
$(O)/src/%.o: src/%.c $(wildcard src/*.h) include/hrt.h $(CONFIG)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DHRT_BUILDING -fvisibility=hidden -c $< -o $@

$(LIB_A): $(LIB_OBJS)
	rm -f $@
	ar rcs $@ $^

# src/libhrt.map: only hrt_*, each in its release's node, HRT_1.0 to HRT_1.2
# (tests/test_exports.sh).
$(LIB_SO): $(LIB_OBJS) src/libhrt.map
	$(CC) $(ALL_LDFLAGS) -shared -Wl,-soname,libhrt.so.$(SOVERSION) -Wl,--version-script=src/libhrt.map \
	  -o $@ $(LIB_OBJS) $(HRT_LDLIBS)
	ln -sf libhrt.so.$(VERSION) $(O)/libhrt.so.$(SOVERSION)
	ln -sf libhrt.so.$(SOVERSION) $(O)/libhrt.so

# The tools are a client of the library: hrt.h only, no -Isrc.
TOOL_CFLAGS = $(filter-out -Isrc,$(ALL_CFLAGS))
$(O)/tools/%.o: tools/%.c $(TOOL_HDRS) include/hrt.h
	@mkdir -p $(dir $@)
	$(CC) $(TOOL_CFLAGS) -DHRT_VERSION_FULL='"$(VERSION)"' -c $< -o $@

$(TOOL_A): $(TOOL_OBJS)
	rm -f $@
	ar rcs $@ $^

$(HRT_BIN): tools/cmd/hrt.c $(TOOL_A) $(LIB_A) $(TOOL_HDRS)
	$(CC) $(TOOL_CFLAGS) -DHRT_VERSION_FULL='"$(VERSION)"' -o $@ $< $(TOOL_A) $(LIB_A) $(ALL_LDFLAGS) $(TOOL_LDLIBS) $(HRT_LDLIBS)

# Per-test extra link flags: TEST_LDFLAGS_<name>.
WRAP_ALLOC = malloc calloc realloc free aligned_alloc posix_memalign
TEST_LDFLAGS_test_noalloc = $(foreach f,$(WRAP_ALLOC),-Wl,--wrap=$(f))
# Every system call a loop iteration could make, counted.
WRAP_LOOP = prctl syscall getpriority fstat read write epoll_wait timerfd_settime
TEST_LDFLAGS_test_loop_syscalls = $(foreach f,$(WRAP_LOOP),-Wl,--wrap=$(f))

$(O)/tests/%: tests/%.c $(wildcard tests/*.h) $(LIB_A) $(TOOL_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(TOOL_A) $(LIB_A) $(ALL_LDFLAGS) $(TEST_LDFLAGS_$*) $(TOOL_LDLIBS) $(HRT_LDLIBS)

# contrib/nginx's timer module against the stub of nginx's interface (no
# nginx source); epoll_wait wrapped to see the timeout its hook asks for.
NGINX_CONTRIB := $(wildcard contrib/nginx/*.[ch] contrib/nginx/stub/*.h)
$(O)/tests/test_nginx_timer: tests/test_nginx_timer.c tests/unit.h $(NGINX_CONTRIB) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Icontrib/nginx/stub -Icontrib/nginx -o $@ $< $(LIB_A) $(ALL_LDFLAGS) \
	  -Wl,--wrap=epoll_wait $(HRT_LDLIBS)

$(O)/fuzz/%-replay: fuzz/%.c fuzz/fuzz_main.c $(wildcard fuzz/*.h) $(LIB_A) $(TOOL_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< fuzz/fuzz_main.c $(TOOL_A) $(LIB_A) $(ALL_LDFLAGS) $(TOOL_LDLIBS) $(HRT_LDLIBS)

# Per-benchmark extra link flags: BENCH_LDFLAGS_<name>.
BENCH_LDFLAGS_wakeups = -Wl,--wrap=epoll_wait    # counts the loop's waits
BENCH_LDFLAGS_shapes = -Wl,--wrap=timerfd_settime # counts the fd's re-arms
# bench/coalesce --uv, --ev: a libuv host (examples/uv_host.h), a libev
# host (examples/ev_host.h), when the library is there.
BENCH_LDFLAGS_coalesce = $(if $(HAVE_LIBUV),-DHRT_BENCH_UV $(EXLIBS_uv_timers)) \
	$(if $(HAVE_LIBEV),-DHRT_BENCH_EV $(EXLIBS_ev_timers))
$(O)/bench/coalesce: examples/uv_host.h examples/ev_host.h
$(O)/bench/%: bench/%.c $(wildcard bench/*.h tests/*.h) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -O2 -o $@ $< $(LIB_A) $(ALL_LDFLAGS) $(BENCH_LDFLAGS_$*) $(HRT_LDLIBS)

# `make examples` builds them beside their sources; `make test` runs copies
# built in $(O) with that build's sanitizer flags.
examples/%: examples/%.c $(wildcard examples/*.h) $(LIB_A)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIB_A) $(ALL_LDFLAGS) $(EXLIBS_$(notdir $@)) $(HRT_LDLIBS)

$(O)/examples/%: examples/%.c $(wildcard examples/*.h) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIB_A) $(ALL_LDFLAGS) $(EXLIBS_$(notdir $@)) $(HRT_LDLIBS)

examples: $(EXAMPLES_OK:%=examples/%)
	@$(foreach e,$(EXAMPLES_MISSING),echo "SKIP: examples/$(e) (install $(EXPKG_$(e)))";)

# The README's usage example must compile and run.
$(O)/readme_example: README.md $(LIB_A)
	@mkdir -p $(dir $@)
	sed -n '/<!-- example -->/,/<!-- end -->/p' README.md | sed '/^```/d;/^<!--/d' > $(O)/readme_example.c
	$(CC) $(ALL_CFLAGS) -o $@ $(O)/readme_example.c $(LIB_A) $(ALL_LDFLAGS) $(HRT_LDLIBS)

EXAMPLE_TESTS := $(patsubst %,$(O)/examples/%,$(filter-out $(EXAMPLE_SERVERS),$(EXAMPLES_OK)))
EXAMPLE_SERVER_BINS := $(patsubst %,$(O)/examples/%,$(filter $(EXAMPLE_SERVERS),$(EXAMPLES_OK)))
README_UV     := $(if $(HAVE_LIBUV),$(O)/readme_uv.o)

# ... and so must the libuv lines in "Event loops and threads".
$(O)/readme_uv.o: README.md include/hrt.h
	@mkdir -p $(dir $@)
	sed -n '/<!-- uv -->/,/<!-- end -->/p' README.md | sed '/^```/d;/^<!--/d' > $(O)/readme_uv.c
	$(CC) $(ALL_CFLAGS) -Wno-unused-parameter $$(pkg-config --cflags libuv 2>/dev/null) -c $(O)/readme_uv.c -o $@

# The shell tests: those that run threaded code (hrt record's workload,
# the hosted loops) in every build; those of the single-threaded tool and
# of the tree (docs, man pages, ABI, install, packages) plainly and under
# ASan+UBSan only: TSan is for threaded code, and under it they took half
# of CI's time.
TEST_SCRIPTS_THREADED = tests/test_cli.sh tests/test_coalesce_hosts.sh tests/test_host_glue.sh
TEST_SCRIPTS_TREE = tests/check_layers.sh tests/test_install.sh tests/test_config.sh tests/test_bench_peers.sh \
	tests/test_exports.sh tests/test_abi.sh tests/test_cmake.sh tests/test_demo_quiet.sh tests/test_figures.sh \
	tests/test_man.sh tests/test_svg_render.sh tests/test_output.sh tests/test_top.sh tests/test_run_slack.sh \
	tests/test_slack_measure.sh tests/test_bench_shapes.sh tests/test_bench_server.sh tests/test_screens.sh \
	tests/test_persist.sh tests/test_nginx_scripts.sh tests/test_nginx_shellcheck.sh tests/test_synopsis.sh
TEST_SCRIPTS = $(TEST_SCRIPTS_THREADED) $(if $(filter thread,$(SANITIZE)),,$(TEST_SCRIPTS_TREE))

test check: $(LIB_A) $(LIB_SO) $(HRT_BIN) $(TEST_BINS) $(FUZZ_REPLAY) $(EXAMPLE_TESTS) $(EXAMPLE_SERVER_BINS) $(O)/readme_example $(README_UV) $(O)/bench/coalesce $(O)/bench/shapes
	O=$(O) HRT=$(HRT_BIN) SAN_FLAGS='$(SAN_FLAGS)' SKIPPED='$(strip $(TEST_SKIPPED))' sh tests/run.sh \
	  $(TEST_BINS) $(FUZZ_REPLAY) $(EXAMPLE_TESTS) $(O)/readme_example $(TEST_SCRIPTS)

# One screen, a sentence per section (tools/demo/demo.sh): the article's example,
# the shipped trace (xz-compressed: without xz that part says what it would
# show), what 1 ms of slack would save, a 2-second interrupt count, and the
# slack applied to sleepers of its own, measured beside the prediction.
# The build runs quietly (its lines go to $(O)/demo-build.log, shown if it
# fails), so a fresh clone's first screen is the demo's.
demo:
	@mkdir -p $(O)
	@$(MAKE) --no-print-directory $(HRT_BIN) $(O)/bench/coalesce $(O)/slack_sleepers > $(O)/demo-build.log 2>&1 || \
	  { cat $(O)/demo-build.log; echo "make demo: the build failed (log: $(O)/demo-build.log)"; exit 1; }
	@sh tools/demo/demo.sh $(HRT_BIN) $(O)/bench/coalesce data/trace.hrt.xz $(O)/slack_sleepers

$(O)/slack_sleepers: tests/slack_sleepers.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(ALL_LDFLAGS)

bench: $(BENCH_BINS)
	@for b in $(BENCH_BINS); do echo "== $$b"; $$b || exit 1; done

# Results go to PERF_DIR, in the build directory; only bench-peers-docs
# (PERF_DIR=docs/perf) rewrites the tracked docs/perf and the quotes of them
# in docs/PERFORMANCE.md.  Plots need gnuplot; without it the tables are
# written and a note says so.
PERF_DIR ?= $(abspath $(O))/perf
PEERS = $(MAKE) -C bench/peers O=$(abspath $(O))/peers HRT_LIB=$(abspath $(LIB_A)) DOCS=$(abspath $(PERF_DIR))

bench-peers: $(LIB_A)
	$(PEERS) run windows

bench-windows: $(LIB_A)
	$(PEERS) windows

bench-peers-docs:
	$(MAKE) bench-peers PERF_DIR=$(CURDIR)/docs/perf

# bench/shapes.c (about 2 minutes), pinned to BENCH_CPU; SHAPES_RUN passes
# more options (e.g. --sections first --rounds 5).  Into PERF_DIR, and
# into docs/PERFORMANCE.md's quote when PERF_DIR is docs/perf.  The label
# is the library's last commit (src/, include/).
BENCH_CPU ?= 0
SHAPES_RUN ?=
bench-shapes: $(O)/bench/shapes
	@mkdir -p $(PERF_DIR)
	( $(O)/bench/shapes --cpu $(BENCH_CPU) --label "$$(git log -1 --format=%h -- src include 2>/dev/null || echo '?')" \
	  --csv $(PERF_DIR)/shapes.csv $(SHAPES_RUN) || echo "bench-shapes: FAILED" ) | tee $(PERF_DIR)/shapes.txt
	@! grep -q '^bench-shapes: FAILED' $(PERF_DIR)/shapes.txt
	sh bench/peers/splice.sh $(PERF_DIR)/../PERFORMANCE.md $(PERF_DIR)/shapes.txt perf/shapes.txt

bench-shapes-docs:
	$(MAKE) bench-shapes PERF_DIR=$(CURDIR)/docs/perf

# Interrupts hrt adds through the timerfd and with the coalesced sleep
# (root: the irq_vectors:local_timer_entry counter), the tables README and
# docs/PERFORMANCE.md quote: hrt_base_loop, then a libuv and a libev host
# (when built with them), one after the other (about 6 minutes each).
COALESCE_RUN = --full --repeat 5 --seconds 2
bench-coalesce-docs: $(O)/bench/coalesce
	$(O)/bench/coalesce $(COALESCE_RUN) > $(O)/coalesce.txt
	$(if $(HAVE_LIBUV),$(O)/bench/coalesce $(COALESCE_RUN) --uv > $(O)/coalesce-uv.txt)
	$(if $(HAVE_LIBEV),$(O)/bench/coalesce $(COALESCE_RUN) --ev > $(O)/coalesce-ev.txt)
	cp $(O)/coalesce.txt $(if $(HAVE_LIBUV),$(O)/coalesce-uv.txt) \
	  $(if $(HAVE_LIBEV),$(O)/coalesce-ev.txt) docs/perf/

# The server benchmark (bench/server, issue 42): a framed echo server on
# 127.0.0.1, one thread, each connection with a 10 s idle timeout re-armed
# on every request and a 1 s heartbeat; its timers as uv_timer_t
# (server-libuv), as hrt range timers with libuv inside hrt_base_loop_host
# (server-hrt), the same with libuv sleeping and hrt planning its sleep
# (server-hrt-plan: one epoll call a wake-up), as sd-event time sources (server-sd-event) and as hrt's
# with sd-event inside hrt_base_loop_host (server-sd-hrt); one client.
# bench/server/run.sh runs alternating pinned rounds at 1,000 and 10,000
# connections, heartbeats only and loaded, pools each version's latency
# samples (>= SERVER_SAMPLES loaded), counts system calls per loop
# iteration in a round of its own (perf, as root), and writes one report
# with the ratios the issues target.  make bench-server: 5 rounds of
# libuv, hrt and hrt-plan (about 14 minutes) into $(PERF_DIR)/server.txt
# and .csv; bench-server-docs: the same into docs/perf, then the figures
# README.md and docs/PERFORMANCE.md quote from it (run it on a quiet
# machine, as root).  SERVER_ROUNDS, SERVER_SECONDS (the least a round
# measures), SERVER_SAMPLES, SERVER_COUNT (the counting round's seconds,
# 0: none), SERVER_CONNS, SERVER_TRAFFIC, SERVER_VERSIONS (add sd-event
# sd-hrt for sd-event's rows; NAME=PROGRAM for a server built elsewhere),
# SERVER_WARMUP, SERVER_RAMP change a run.  Without libuv1-dev it says so
# and exits 0; without libsystemd-dev the sd-event rows say so.
SERVER_O        = $(O)/server
SERVER_HDRS     = $(wildcard bench/server/*.h) include/hrt.h examples/uv_host.h examples/uv_plan.h $(CONFIG)
HAVE_SDEVENT    = $(if $(filter sdevent_timers,$(EXAMPLES_MISSING)),,y)
SERVER_BINS     = $(SERVER_O)/client $(SERVER_O)/server-libuv $(SERVER_O)/server-hrt \
	$(SERVER_O)/server-hrt-plan \
	$(if $(HAVE_SDEVENT),$(SERVER_O)/server-sd-event $(SERVER_O)/server-sd-hrt)
SERVER_ROUNDS   ?= 5
SERVER_SECONDS  ?= 6
SERVER_SAMPLES  ?= 30000
SERVER_COUNT    ?= 3
SERVER_CONNS    ?= 1000 10000
SERVER_TRAFFIC  ?= heartbeats loaded
SERVER_VERSIONS ?= libuv hrt hrt-plan
SERVER_WARMUP   ?= 2
SERVER_RAMP     ?= 1
SERVER_RAW      ?= $(PERF_DIR)/server.rounds
SERVER_RUN = BIN=$(SERVER_O) OUT=$(PERF_DIR)/server RAW=$(SERVER_RAW) ROUNDS=$(SERVER_ROUNDS) MEASURE=$(SERVER_SECONDS) \
	SAMPLES=$(SERVER_SAMPLES) COUNT=$(SERVER_COUNT) \
	CONNS='$(SERVER_CONNS)' TRAFFIC='$(SERVER_TRAFFIC)' VERSIONS='$(SERVER_VERSIONS)' \
	WARMUP=$(SERVER_WARMUP) RAMP=$(SERVER_RAMP) sh bench/server/run.sh

$(SERVER_O)/client: bench/server/client.c bench/server/proto.h bench/procstat.h $(CONFIG)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(ALL_LDFLAGS)

$(SERVER_O)/server-libuv: bench/server/server_uv.c $(SERVER_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(ALL_LDFLAGS) $(EXLIBS_uv_timers)

$(SERVER_O)/server-hrt: bench/server/server_uv.c $(SERVER_HDRS) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DTIMERS_HRT -o $@ $< $(LIB_A) $(ALL_LDFLAGS) $(EXLIBS_uv_timers) $(HRT_LDLIBS)

$(SERVER_O)/server-hrt-plan: bench/server/server_uv.c $(SERVER_HDRS) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DTIMERS_HRT -DHOST_PLAN -o $@ $< $(LIB_A) $(ALL_LDFLAGS) $(EXLIBS_uv_timers) $(HRT_LDLIBS)

$(SERVER_O)/server-sd-event: bench/server/server_sd.c $(SERVER_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(ALL_LDFLAGS) $(EXLIBS_sdevent_timers)

$(SERVER_O)/server-sd-hrt: bench/server/server_sd.c $(SERVER_HDRS) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DTIMERS_HRT -o $@ $< $(LIB_A) $(ALL_LDFLAGS) $(EXLIBS_sdevent_timers) $(HRT_LDLIBS)

.PHONY: bench-server bench-nginx bench-server-docs
ifeq ($(HAVE_LIBUV),y)
bench-server: $(SERVER_BINS)
	@mkdir -p $(PERF_DIR)
	$(SERVER_RUN)
else
bench-server:
	@echo "SKIP bench-server (install libuv1-dev)"
endif

# The default run into docs/perf (the raw lines stay in the build
# directory), then bench/server/docs.sh: PERFORMANCE.md's tables between
# its bench-server-docs markers written from it, and every figure README.md
# and PERFORMANCE.md link to docs/perf/server.csv refreshed (read the words
# around them again: the verdicts are the run's).
bench-server-docs:
	$(MAKE) bench-server PERF_DIR=$(CURDIR)/docs/perf SERVER_RAW=$(abspath $(O))/server-docs.rounds
	sh bench/server/docs.sh docs/perf/server README.md docs/PERFORMANCE.md

# nginx against nginx on hrt (contrib/nginx, bench/nginx/run.sh): NGINX_SRC
# is an nginx source tree (github.com/nginx/nginx; 1.31.4 tested); without
# it the target says SKIP and succeeds.
NGINX_SRC ?=
$(O)/bench/nginx-client: bench/nginx/client.c bench/procstat.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -O2 -o $@ $< $(ALL_LDFLAGS)

bench-nginx: $(O)/bench/nginx-client
	NGINX_SRC='$(NGINX_SRC)' CLIENT=$(O)/bench/nginx-client OUT=$(PERF_DIR)/nginx sh bench/nginx/run.sh

# The README's "apply and measure" step on this machine (root, tracefs).
bench-slack-docs: $(HRT_BIN) $(O)/slack_sleepers
	sh bench/slack_measure.sh $(HRT_BIN) $(O)/slack_sleepers docs/perf/slack-measure.txt

# The verdict on the shipped trace that README quotes (test_figures checks
# that this file is what the tool prints today).
docs-replay: $(HRT_BIN)
	$(HRT_BIN) replay --slack 1ms --verdict data/trace.hrt.xz > docs/perf/replay-verdict.txt
	$(HRT_BIN) replay --slack 1ms --verdict data/vm-2cpu-busy-2s.tracefs.txt.xz > docs/perf/replay-verdict-vm.txt

bench-before-after: $(LIB_A)
	$(PEERS) before-after

bench-callgrind: $(LIB_A)
	$(PEERS) callgrind

bench-floor: $(LIB_A)
	$(PEERS) floor

# The ABI against the baseline stored for the soname (tests/check_abi.sh,
# abigail-tools); abi-baseline writes that baseline: with a SOVERSION bump,
# and for each release.  A minor release (functions added in a new node of
# src/libhrt.map) first passes abi-check against the last release's
# baseline, then writes its own, so that its functions are kept too.
abi-check: $(LIB_SO)
	sh tests/check_abi.sh $(O)/libhrt.so

abi-baseline: $(LIB_SO)
	abidw --headers-dir include --no-corpus-path --no-comp-dir-path \
	  --out-file abi/libhrt.so.$(SOVERSION).abi $(O)/libhrt.so

# Debian packages (debian/) built from a copy of the tree in $(O)/deb, as
# dpkg-buildpackage writes beside the source directory; then lintian (no
# error, no warning) and the autopkgtest (debian/tests) against the packages
# unpacked there.  CI runs it (.ci/run).
DEB_DIR = $(O)/deb
DEB_ROOT = $(DEB_DIR)/root
DEB_MA = $(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null)
deb:
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/hrt-$(VERSION)
	{ if git rev-parse --git-dir >/dev/null 2>&1; then git ls-files -co --exclude-standard -z; \
	  else find . \( -name 'build*' -o -name .git \) -prune -o \( -type f -o -type l \) -print0; fi; } | \
	  xargs -0 cp -P --parents -t $(DEB_DIR)/hrt-$(VERSION)
	cd $(DEB_DIR)/hrt-$(VERSION) && dpkg-buildpackage -us -uc -b
	lintian --fail-on error,warning --display-info $(DEB_DIR)/hrt_$(VERSION)_*.changes
	for d in $(DEB_DIR)/*.deb; do dpkg-deb -x $$d $(DEB_ROOT) || exit 1; done
	cd $(DEB_DIR)/hrt-$(VERSION) && AUTOPKGTEST_TMP=$(abspath $(DEB_DIR))/autopkgtest \
	  PKG_CONFIG_SYSROOT_DIR=$(abspath $(DEB_ROOT)) \
	  PKG_CONFIG_LIBDIR=$(abspath $(DEB_ROOT))/usr/lib/$(DEB_MA)/pkgconfig \
	  CMAKE_PREFIX_PATH=$(abspath $(DEB_ROOT))/usr LD_LIBRARY_PATH=$(abspath $(DEB_ROOT))/usr/lib/$(DEB_MA) \
	  sh -c 'mkdir -p "$$AUTOPKGTEST_TMP" && debian/tests/readme-example'

fuzz: $(FUZZ_BINS)
	@for f in $(FUZZ_BINS); do n=$$(basename $$f); mkdir -p build-fuzz/corpus-$$n; \
	  echo "== $$n ($(FUZZ_SECONDS) s)"; \
	  $$f -max_total_time=$(FUZZ_SECONDS) -timeout=10 -print_final_stats=1 build-fuzz/corpus-$$n fuzz/corpus/$$n || exit 1; done

build-fuzz/%: fuzz/%.c $(LIB_SRCS) $(TOOL_SRCS)
	@mkdir -p build-fuzz
	clang -std=c11 -D_GNU_SOURCE -g -O1 -Iinclude -Isrc -pthread -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	  -o $@ $< $(LIB_SRCS) $(TOOL_SRCS) -lm

# hrt.pc is written at install time for this PREFIX/LIBDIR/INCLUDEDIR, so it
# cannot go stale; directories under the prefix are written ${prefix}/...
pc_dir = $(patsubst $(PREFIX)/%,$${prefix}/%,$(patsubst $(PREFIX),$${prefix},$(1)))
# The CMake package (hrt-config.cmake.in) likewise: its directories are
# ${_hrt_prefix}/..., the prefix found from the file's own directory.
cm_dir = $(patsubst $(PREFIX)/%,$${_hrt_prefix}/%,$(patsubst $(PREFIX),$${_hrt_prefix},$(1)))
cm_up = $(shell echo '$(patsubst $(PREFIX)/%,%,$(CMAKEDIR))' | sed 's|[^/][^/]*|..|g')
CM_PREFIX = $(if $(filter $(PREFIX)/%,$(CMAKEDIR)),$${CMAKE_CURRENT_LIST_DIR}/$(cm_up),$(PREFIX))
CM_SED = -e 's|@PREFIX_EXPR@|$(CM_PREFIX)|' -e 's|@LIBDIR@|$(call cm_dir,$(LIBDIR))|' \
	-e 's|@INCLUDEDIR@|$(call cm_dir,$(INCLUDEDIR))|' -e 's|@VERSION@|$(VERSION)|' \
	-e 's|@MAJOR@|$(word 1,$(subst ., ,$(VERSION)))|' -e 's|@SOVERSION@|$(SOVERSION)|'
MAN1 := $(wildcard man/*.1)
MAN3 := $(wildcard man/*.3)
# A page for several functions is one file; the other names are symbolic
# links to it, in the tree (man -l man/NAME.3 works) and installed alike.
MAN3_LINKS := $(shell find man -name '*.3' -type l)
MAN3_PAGES := $(filter-out $(MAN3_LINKS),$(MAN3))

install: lib tools
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(BINDIR) \
	  $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3
	install -m 644 include/hrt.h $(DESTDIR)$(INCLUDEDIR)/hrt.h
	install -m 644 $(LIB_A) $(DESTDIR)$(LIBDIR)/libhrt.a
	install -m 755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/libhrt.so.$(VERSION)
	ln -sf libhrt.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libhrt.so.$(SOVERSION)
	ln -sf libhrt.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libhrt.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(call pc_dir,$(LIBDIR))|' \
	    -e 's|@INCLUDEDIR@|$(call pc_dir,$(INCLUDEDIR))|' -e 's|@VERSION@|$(VERSION)|' \
	    hrt.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/hrt.pc.tmp
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/hrt.pc.tmp
	mv -f $(DESTDIR)$(PKGCONFIGDIR)/hrt.pc.tmp $(DESTDIR)$(PKGCONFIGDIR)/hrt.pc
	install -d $(DESTDIR)$(CMAKEDIR)
	for f in hrt-config hrt-config-version; do \
	  sed $(CM_SED) $$f.cmake.in > $(DESTDIR)$(CMAKEDIR)/$$f.cmake.tmp && \
	  chmod 644 $(DESTDIR)$(CMAKEDIR)/$$f.cmake.tmp && \
	  mv -f $(DESTDIR)$(CMAKEDIR)/$$f.cmake.tmp $(DESTDIR)$(CMAKEDIR)/$$f.cmake || exit 1; done
	install -m 755 $(HRT_BIN) $(DESTDIR)$(BINDIR)/hrt
	install -m 644 $(MAN1) $(DESTDIR)$(MANDIR)/man1
	install -m 644 $(MAN3_PAGES) $(DESTDIR)$(MANDIR)/man3
	@for l in $(MAN3_LINKS); do ln -sf "$$(readlink "$$l")" "$(DESTDIR)$(MANDIR)/man3/$${l#man/}" || exit 1; done
	install -d $(DESTDIR)$(EXAMPLESDIR)
	install -m 644 $(HOST_GLUE) $(DESTDIR)$(EXAMPLESDIR)
	@$(ldconfig_step)

# An install into the live system (no DESTDIR) into a directory the dynamic
# linker searches refreshes its cache when run as root, as libtool does, or
# a program built with -lhrt fails to start (libhrt.so.1: cannot open
# shared object file).  A private prefix (LIBDIR not among the directories
# `ldconfig -v` lists) is left alone: the system's cache has no use for it,
# and it says what works instead.  Not root, ldconfig cannot run: say so.
# Staged installs (DESTDIR: packages) leave the cache to the package manager.
LDCONFIG ?= /sbin/ldconfig
define ldconfig_step
if [ -z "$(DESTDIR)" ]; then \
	  lib=$$(readlink -f "$(LIBDIR)"); searched=; \
	  for d in $$($(LDCONFIG) -v -N -X 2>/dev/null | sed -n 's,^\(/[^:]*\):.*,\1,p'); do \
	    [ "$$(readlink -f "$$d" 2>/dev/null)" = "$$lib" ] && searched=1; \
	  done; \
	  if [ -z "$$searched" ]; then \
	    echo "note: $(LIBDIR) is not a directory the dynamic linker searches (a private"; \
	    echo "  prefix), so ldconfig was not run: link with -Wl,-rpath,$(LIBDIR)"; \
	    printf '%s\n' "  or run with LD_LIBRARY_PATH=$(LIBDIR); CMake finds the package with" \
	      "  -DCMAKE_PREFIX_PATH=$(PREFIX), pkg-config with PKG_CONFIG_PATH=$(PKGCONFIGDIR)."; \
	  elif [ "$$(id -u)" -eq 0 ]; then \
	    echo "$(LDCONFIG)"; $(LDCONFIG) || exit 1; \
	  else \
	    echo "note: not root, so ldconfig did not run: until it does (as root), a program"; \
	    echo "  linked with -lhrt does not find libhrt.so.$(SOVERSION) in $(LIBDIR)."; \
	  fi; \
	fi
endef

uninstall:
	rm -f $(DESTDIR)$(INCLUDEDIR)/hrt.h $(DESTDIR)$(LIBDIR)/libhrt.a \
	  $(DESTDIR)$(LIBDIR)/libhrt.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libhrt.so.$(SOVERSION) \
	  $(DESTDIR)$(LIBDIR)/libhrt.so $(DESTDIR)$(PKGCONFIGDIR)/hrt.pc $(DESTDIR)$(BINDIR)/hrt \
	  $(DESTDIR)$(CMAKEDIR)/hrt-config.cmake $(DESTDIR)$(CMAKEDIR)/hrt-config-version.cmake \
	  $(MAN1:man/%=$(DESTDIR)$(MANDIR)/man1/%) $(MAN3:man/%=$(DESTDIR)$(MANDIR)/man3/%) \
	  $(HOST_GLUE:examples/%=$(DESTDIR)$(EXAMPLESDIR)/%)
	@# hrt's own directories (named for it), when empty: nothing else in them
	@for dir in $(DESTDIR)$(CMAKEDIR) $(DESTDIR)$(EXAMPLESDIR) $(DESTDIR)$(DOCDIR); do \
	  case $$dir in */hrt | */libhrt-dev | */hrt/examples | */libhrt-dev/examples) \
	    if [ -d "$$dir" ]; then rmdir --ignore-fail-on-non-empty "$$dir" || exit 1; fi ;; esac; done

clean:
	rm -rf build build-asan build-tsan build-fuzz hrt.pc $(EXAMPLE_BINS)
