# proff — top-level build.
#
#   make            build build/proff, the library and the instrumentation runtime
#   make check      install missing packages, build, run every test (normal + ASan/UBSan)
#   make demo       install missing packages, record two versions of examples/ and report them
#   make demo-fleet the same programs on a simulated fleet, pushed to ClickHouse (docs/fleet.md)
#   make bench      benchmarks against perf/dprofpp/uftrace, side by side, ratios printed
#   make fuzz       long libFuzzer runs of every parser (not part of check);
#                   FUZZ_TIME=seconds per target, FUZZ_TARGETS="trace dprof ..."
#   make doc        the manual pages (docs/man/*.scd, scdoc) into build/man/man1
#   make install    PREFIX=/usr/local DESTDIR=: proff, the instrumentation runtime,
#                   man pages, bash/zsh completion, libproff.a + headers + proff.pc;
#                   make uninstall removes them
#
# Every lib/**/*.c goes into libproff.a, every cli/*.c into the proff binary,
# every tests/unit/test_*.c becomes one cmocka test binary. Adding a file needs
# no change here. BUILD=dir selects the output directory, SAN=1 the sanitizers.

BUILD   ?= build
SAN     ?= 0
CC      ?= cc
WERROR  ?= 0

PKGS     := libdw libelf libzstd zlib liblzma libprotobuf-c
CPPFLAGS += -Iinclude -D_GNU_SOURCE -DPROFF_VERSION=\"0.1.0\"
CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu17 -Wall -Wextra -Wno-unused-parameter -fno-omit-frame-pointer
ifeq ($(WERROR),1)
CFLAGS   += -Werror
endif
ifeq ($(SAN),1)
CFLAGS   += -fsanitize=address,undefined -fno-sanitize-recover=undefined -O1
LDFLAGS  += -fsanitize=address,undefined
endif
ifeq ($(TSAN),1)
CFLAGS   += -fsanitize=thread -O1
LDFLAGS  += -fsanitize=thread
endif
LIBS     := $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -ldw -lelf -lzstd -lz -llzma -lprotobuf-c) -lstdc++ -lm -lpthread

LIB_SRC  := $(shell find lib -name '*.c' | sort)
CLI_SRC  := $(wildcard cli/*.c)
RT_SRC   := $(wildcard runtime/*.c)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
DEPS     := $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d)

# pprof's schema (lib/formats/profile.proto): protobuf-c's C code for it is
# generated into $(BUILD)/gen/formats/ and goes into libproff.a
GEN      := $(BUILD)/gen
CPPFLAGS += -I$(GEN)
LIB_OBJ  += $(GEN)/formats/profile.pb-c.o
$(GEN)/formats/%.pb-c.c $(GEN)/formats/%.pb-c.h: lib/formats/%.proto
	@mkdir -p $(dir $@)
	protoc-c --proto_path=lib/formats --c_out=$(GEN)/formats $<
$(GEN)/formats/%.pb-c.o: $(GEN)/formats/%.pb-c.c
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@
$(filter $(BUILD)/lib/formats/%,$(LIB_OBJ)): | $(GEN)/formats/profile.pb-c.h

all: $(BUILD)/proff $(BUILD)/libproff-instrument.so $(BUILD)/libproff-instrument.a

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

# the flame graph page's CSS and JS, embedded by .incbin (lib/output/flamegraph-page.c)
$(BUILD)/lib/output/flamegraph-page.o: lib/output/flamegraph-page.css lib/output/flamegraph-page.js

$(BUILD)/libproff.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/proff: $(CLI_OBJ) $(BUILD)/libproff.a
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libproff.a $(LIBS)

# The -finstrument-functions runtime: no dependency on the rest of proff, and
# never itself instrumented, never sanitized (it runs inside the profiled program).
RT_CFLAGS := -std=gnu17 -O2 -g -Wall -Wextra -Wno-unused-parameter -fPIC -fvisibility=hidden -Iinclude -D_GNU_SOURCE
RT_HDR := include/proff/trace.h lib/calibrate/calfile-parse.h
$(BUILD)/libproff-instrument.so: $(RT_SRC) $(RT_HDR)
	@mkdir -p $(dir $@)
	$(if $(RT_SRC),$(CC) $(RT_CFLAGS) -shared -o $@ $(RT_SRC) -lpthread,touch $@)

$(BUILD)/libproff-instrument.a: $(RT_SRC) $(RT_HDR)
	@mkdir -p $(BUILD)/rt
	@rm -f $@
	$(if $(RT_SRC),for f in $(RT_SRC); do $(CC) $(RT_CFLAGS) -c $$f -o $(BUILD)/rt/$$(basename $$f .c).o || exit 1; done; ar rcs $@ $(BUILD)/rt/*.o,ar rcs $@)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libproff.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libproff.a $(LIBS) -lcmocka

tests: $(UNIT_BIN)

deps:
	@bash scripts/setup-deps.sh

# make check: the whole suite. Normal build first (unit, cli, oracle tests),
# then an ASan+UBSan build running the unit and end-to-end tests again, and
# a ThreadSanitizer build of the test that reads files with two threads.
check: deps
	@$(MAKE) --no-print-directory all tests doc WERROR=1
	@$(MAKE) --no-print-directory all tests BUILD=build/asan SAN=1 WERROR=1
	@$(MAKE) --no-print-directory build/tsan/tests/test_profile_split build/tsan/tests/test_symbol_threads build/tsan/tests/test_hist build/tsan/tests/test_diff_groups BUILD=build/tsan TSAN=1 WERROR=1
	@bash tests/run.sh

demo: deps all
	@bash examples/demo.sh

demo-fleet: deps all
	@bash examples/demo-fleet.sh

bench: deps all
	@bash bench/run.sh

fuzz: deps all
	@PROFF=$(BUILD)/proff bash tests/fuzz/run.sh $(FUZZ_TIME) $(FUZZ_TARGETS)

# The manual pages: one scdoc source per page, troff beside the binary (where
# `proff CMD --help` finds them before they are installed).
MAN_SRC  := $(wildcard docs/man/*.scd)
MAN_OUT  := $(MAN_SRC:docs/man/%.scd=$(BUILD)/man/man1/%)
doc: $(MAN_OUT)
$(BUILD)/man/man1/%: docs/man/%.scd
	@mkdir -p $(dir $@)
	scdoc < $< > $@

PREFIX     ?= /usr/local
DESTDIR    ?=
BINDIR     := $(PREFIX)/bin
LIBDIR     := $(PREFIX)/lib
INCDIR     := $(PREFIX)/include
MANDIR     := $(PREFIX)/share/man
BASHCOMPDIR := $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR := $(PREFIX)/share/zsh/site-functions
PUB_HDR    := $(wildcard include/proff/*.h)

# proff finds its runtime in $(LIBDIR)/proff (../lib/proff from its own
# directory) and its manual pages in ../share/man: a prefix moves as a whole.
install: all doc
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/proff $(DESTDIR)$(LIBDIR)/pkgconfig \
		$(DESTDIR)$(INCDIR)/proff $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	install -m 755 $(BUILD)/proff $(DESTDIR)$(BINDIR)/proff
	install -m 755 $(BUILD)/libproff-instrument.so $(DESTDIR)$(LIBDIR)/proff/libproff-instrument.so
	install -m 644 $(BUILD)/libproff-instrument.a $(DESTDIR)$(LIBDIR)/proff/libproff-instrument.a
	install -m 644 $(BUILD)/libproff.a $(DESTDIR)$(LIBDIR)/libproff.a
	install -m 644 $(PUB_HDR) $(DESTDIR)$(INCDIR)/proff/
	install -m 644 $(MAN_OUT) $(DESTDIR)$(MANDIR)/man1/
	install -m 644 completion/proff.bash $(DESTDIR)$(BASHCOMPDIR)/proff
	install -m 644 completion/_proff $(DESTDIR)$(ZSHCOMPDIR)/_proff
	sed -e 's|@PREFIX@|$(PREFIX)|' -e "s|@VERSION@|$$($(BUILD)/proff --version | sed 's/.* //')|" \
		-e 's|@LIBS@|$(LIBS)|' scripts/proff.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/proff.pc

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/proff $(DESTDIR)$(LIBDIR)/libproff.a $(DESTDIR)$(LIBDIR)/pkgconfig/proff.pc \
		$(DESTDIR)$(LIBDIR)/proff/libproff-instrument.so $(DESTDIR)$(LIBDIR)/proff/libproff-instrument.a \
		$(DESTDIR)$(BASHCOMPDIR)/proff $(DESTDIR)$(ZSHCOMPDIR)/_proff
	rm -f $(addprefix $(DESTDIR)$(INCDIR)/proff/,$(notdir $(PUB_HDR)))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MAN_OUT)))
	-rmdir $(DESTDIR)$(LIBDIR)/proff $(DESTDIR)$(INCDIR)/proff 2>/dev/null

clean:
	rm -rf build

.PHONY: all tests deps check demo demo-fleet bench fuzz clean doc install uninstall
.SECONDARY:

-include $(DEPS)
