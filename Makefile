# SPDX-License-Identifier: MIT
# Proxima build. `make` builds ./proxima; `make test` runs every test and
# ends with "N passed, N failed"; `make check` does the same under ASan and
# UBSan in build-check/; `make bench` runs the benchmarks; `make demo` runs
# the main job on the bundled example.

CC       ?= cc
OPT      ?= -O2 -g
CFLAGS_WARN = -std=c11 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wold-style-definition -Wwrite-strings -Wformat=2 \
	-Wvla -Wcast-qual -Wpointer-arith -Wundef -Wdouble-promotion -fno-common \
	-Wno-unused-parameter
ifeq ($(DEVELOPER),1)
CFLAGS_WARN += -Werror
endif
ifeq ($(CI),true)
CFLAGS_WARN += -Werror
endif
CPPFLAGS += -D_GNU_SOURCE

# The rooms of the house and what each may include (docs/design.md, Layout):
# a room sees its own headers and those of the rooms below it, nothing else,
# so an include against the arrows is a compile error.
I_geometry  = -Igeometry
I_base      = $(I_geometry) -Iengine/base
I_recording = $(I_base) -Iengine/recording
I_tools     = $(I_recording) -Itools -I$(BUILD)/gen
I_task      = $(I_tools) -Iengine/task
I_llm       = $(I_base) -Iengine/llm
I_brain     = $(I_task) -Iengine/llm -Iengine/brain
I_agent     = $(I_brain) -Iengine/store -Iengine/agent
I_store     = $(I_base) -Iengine/store
I_synth     = $(I_recording) -Iengine/synth
I_out       = $(I_recording) -Iengine/store -Iengine/llm -Iengine/out
I_all       = $(I_agent) -Iengine/store -Iengine/synth -Iengine/out -Iengine/cmd
ROOMS       = base recording task llm brain agent store synth out cmd
CFLAGS   += $(OPT) $(CFLAGS_WARN) -fopenmp
# FFmpeg's libraries decode recordings' videos and encode the rendered video
# of `proxima synth` (libx264); they are not linked but loaded when a video
# is first opened (engine/recording/avdl.h), so a command that reads no
# video does not pay for loading them.
# mimalloc (Debian's libmimalloc-dev) replaces malloc for the whole process:
# generation makes and frees a few million small blocks (cJSON nodes, tool
# results, traces) on two threads, where glibc's malloc took a tenth of the
# time. The sanitizer build keeps the sanitizers' allocator (MALLOC_LIB=).
MALLOC_LIB ?= -lmimalloc
# libcurl and libmicrohttpd are loaded when first used too
# (engine/llm/curldl.h, engine/out/mhddl.h); the tests and benchmarks that
# call them as clients link them (TEST_LDLIBS).
LDLIBS   += $(MALLOC_LIB) -lcjson -lcrypto -lsqlite3 \
	-lturbojpeg -lzstd -llz4 -lm -ldl -fopenmp
TEST_LDLIBS = -lcurl -lmicrohttpd

BUILD    ?= build
VERSION  := 0.2.0
# The commit built, when this is a git checkout (engine/base/version.h).
GIT_DESC := $(shell git describe --always --dirty --abbrev=10 2>/dev/null)
FULL_VERSION := $(VERSION)$(if $(GIT_DESC),+g$(GIT_DESC))
SANFLAGS  = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

GEOM_SRC   := $(wildcard geometry/*.c)
TOOLS_SRC  := $(wildcard tools/*.c)
ENGINE_SRC := $(filter-out engine/cmd/main.c,$(wildcard $(ROOMS:%=engine/%/*.c)))
EMBED_IN   := $(sort $(wildcard schemas/*.json schemas/*/*.json prompts/*.txt prompts/*/*.txt web/*.html web/*.css web/*.js engine/out/*.py))
LIB_SRC    := $(GEOM_SRC) $(TOOLS_SRC) $(ENGINE_SRC)
TOOL_SCHEMAS := $(sort $(filter-out schemas/tools/submit_qa.json,$(wildcard schemas/tools/*.json)))
LIB_OBJ    := $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/embedded.o $(BUILD)/gen/version.o \
	$(BUILD)/gen/tools_gen.o
MAIN_OBJ   := $(BUILD)/engine/cmd/main.o
TEST_SRC   := $(wildcard tests/unit/test_*.c)
TEST_BIN   := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
STUB_SRC   := $(wildcard tests/stub/*.c)
STUB_BIN   := $(if $(STUB_SRC),$(BUILD)/tests/llm_stub)
BENCH_SRC  := $(wildcard bench/*.c)
BENCH_BIN  := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

.PHONY: all deps test check bench demo clean lint fuzz print-inc print-libs install man
all: deps $(BUILD)/proxima proxima

deps:
	@sh scripts/setup.sh

proxima: $(BUILD)/proxima
	@if [ "$(BUILD)" = build ]; then ln -sf build/proxima proxima; fi

$(BUILD)/proxima: $(LIB_OBJ) $(MAIN_OBJ)
	$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

$(BUILD)/libproxima.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/embed: scripts/embed.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -o $@ $<

# Regenerated when a data file is added, removed or changed.
$(BUILD)/gen/embedded.c: $(BUILD)/embed $(EMBED_IN) Makefile
	@mkdir -p $(dir $@)
	$(BUILD)/embed $@ $(EMBED_IN)

# The tool table, from the tool schemas (scripts/gen_tools.sh): one run makes
# both files (a grouped target, GNU make 4.3), never two racing under -j.
$(BUILD)/gen/tools_gen.h $(BUILD)/gen/tools_gen.c &: scripts/gen_tools.sh $(TOOL_SCHEMAS)
	@mkdir -p $(BUILD)/gen
	sh scripts/gen_tools.sh $(BUILD)/gen/tools_gen $(TOOL_SCHEMAS)

$(BUILD)/gen/tools_gen.o: $(BUILD)/gen/tools_gen.c
	$(CC) $(CPPFLAGS) $(I_tools) $(CFLAGS) -c -o $@ $<

# Every object may include registry.h, which includes the generated header.
$(LIB_SRC:%.c=$(BUILD)/%.o) $(MAIN_OBJ): | $(BUILD)/gen/tools_gen.h

# Rewritten only when the version text changes, so a rebuild stays minimal.
$(BUILD)/gen/version.c: FORCE
	@mkdir -p $(dir $@)
	@printf '%s\n' '/* Generated by the Makefile. */' '#include "version.h"' \
		'const char *version_string(void)' '{' '	return "$(FULL_VERSION)";' '}' >$@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

$(BUILD)/gen/version.o: $(BUILD)/gen/version.c
	$(CC) $(CPPFLAGS) $(I_base) $(CFLAGS) -c -o $@ $<

.PHONY: FORCE
FORCE:

$(BUILD)/gen/embedded.o: $(BUILD)/gen/embedded.c
	$(CC) $(CPPFLAGS) $(I_base) $(CFLAGS) -c -o $@ $<

$(BUILD)/geometry/%.o:  ROOM_INC = $(I_geometry)
# The ray caster's traversal: -O3 unrolls and if-converts more of it
# (cachegrind: 6% fewer instructions and 9% fewer mispredicts per ray).
$(BUILD)/geometry/bvh.o: CFLAGS += -O3
$(BUILD)/tools/%.o:     ROOM_INC = $(I_tools)
$(BUILD)/engine/base/%.o:      ROOM_INC = $(I_base)
$(BUILD)/engine/recording/%.o: ROOM_INC = $(I_recording)
$(BUILD)/engine/task/%.o:      ROOM_INC = $(I_task)
$(BUILD)/engine/llm/%.o:       ROOM_INC = $(I_llm)
$(BUILD)/engine/brain/%.o:     ROOM_INC = $(I_brain)
$(BUILD)/engine/agent/%.o:     ROOM_INC = $(I_agent)
$(BUILD)/engine/store/%.o:     ROOM_INC = $(I_store)
$(BUILD)/engine/synth/%.o:     ROOM_INC = $(I_synth)
$(BUILD)/engine/out/%.o:       ROOM_INC = $(I_out)
$(BUILD)/engine/cmd/%.o:       ROOM_INC = $(I_all)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ROOM_INC) $(CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libproxima.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(I_all) $(CFLAGS) -Wno-missing-prototypes -o $@ $< $(BUILD)/libproxima.a $(LDFLAGS) $(LDLIBS) $(TEST_LDLIBS) -lcmocka

# The stub stands in for a remote server but shares the cores with the run it
# serves, so it keeps glibc's malloc: mimalloc's heap for each of its connection
# threads cost it three times the page faults (bench_generate, --jobs 64).
$(BUILD)/tests/llm_stub: $(STUB_SRC) $(BUILD)/libproxima.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(I_all) $(CFLAGS) -o $@ $(STUB_SRC) $(BUILD)/libproxima.a $(LDFLAGS) $(filter-out $(MALLOC_LIB),$(LDLIBS)) $(TEST_LDLIBS)

# ffmpeg is only needed by the tests of export --frames and the video review test.
test: deps $(BUILD)/proxima $(TEST_BIN) $(STUB_BIN)
	@sh scripts/setup.sh ffmpeg
	@BUILD=$(BUILD) sh tests/run.sh

check:
	@$(MAKE) --no-print-directory BUILD=build-check OPT="-O1 -g $(SANFLAGS) -DENG_DEBUG" \
		LDFLAGS="$(SANFLAGS)" MALLOC_LIB= test

bench: deps $(BUILD)/proxima $(BENCH_BIN) $(STUB_BIN)
	@BUILD=$(BUILD) sh bench/run.sh

$(BUILD)/bench/%: bench/%.c $(BUILD)/libproxima.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(I_all) $(CFLAGS) -Wno-missing-prototypes -o $@ $< $(BUILD)/libproxima.a $(LDFLAGS) $(LDLIBS) $(TEST_LDLIBS)

demo: all
	@sh scripts/demo.sh

# clang-format on the files of .clang-format-files, cppcheck and clang-tidy
# (.clang-tidy); fails on any finding.
lint:
	@BUILD=$(BUILD) sh scripts/lint.sh

# libFuzzer targets (clang); FUZZ_SECONDS per target, default 20.
fuzz:
	@sh tests/fuzz/run.sh

# The man page, from the commands' --help texts.
man: $(BUILD)/proxima.1
$(BUILD)/proxima.1: $(BUILD)/proxima scripts/man.sh
	sh scripts/man.sh $(BUILD)/proxima $(FULL_VERSION) >$@.tmp && mv $@.tmp $@

# make install [PREFIX=/usr/local] [DESTDIR=...]: the binary, its man page
# and the review page's files.
PREFIX ?= /usr/local
install: all $(BUILD)/proxima.1
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/proxima/web
	install -m 0755 $(BUILD)/proxima $(DESTDIR)$(PREFIX)/bin/proxima
	install -m 0644 $(BUILD)/proxima.1 $(DESTDIR)$(PREFIX)/share/man/man1/proxima.1
	install -m 0644 $(wildcard web/*.html web/*.css web/*.js) $(DESTDIR)$(PREFIX)/share/proxima/web/

# The include flags of every room, and the libraries, for scripts that
# compile outside make (tests/fuzz/run.sh, tests/cli/test_fuzz.sh).
print-inc:
	@echo $(I_all)

print-libs:
	@echo $(LDLIBS)

clean:
	rm -rf build build-check build-fuzz proxima

-include $(LIB_OBJ:.o=.d) $(MAIN_OBJ:.o=.d)
