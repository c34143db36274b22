# SPDX-License-Identifier: MIT
# Proxima build. `make` builds ./proxima; `make test` runs every test and
# ends with "N passed, N failed"; `make check` does the same under ASan and
# UBSan in build-check/; `make bench` runs the benchmarks; `make demo` runs
# the main job on the bundled example.

CC       ?= cc
OPT      ?= -O2 -g
CFLAGS_WARN = -std=c11 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wold-style-definition -Wwrite-strings -Wformat=2 \
	-Wvla -Wcast-qual -Wpointer-arith -Wundef -fno-common \
	-Wno-unused-parameter
ifeq ($(DEVELOPER),1)
CFLAGS_WARN += -Werror
endif
ifeq ($(CI),true)
CFLAGS_WARN += -Werror
endif
CPPFLAGS += -D_GNU_SOURCE -Iengine -Itools -Igeometry
CFLAGS   += $(OPT) $(CFLAGS_WARN) -fopenmp
LDLIBS   += -lcjson -lcurl -lcrypto -lsqlite3 -lmicrohttpd -lm -fopenmp

BUILD    ?= build
SANFLAGS  = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

GEOM_SRC   := $(wildcard geometry/*.c)
TOOLS_SRC  := $(wildcard tools/*.c)
ENGINE_SRC := $(filter-out engine/main.c,$(wildcard engine/*.c))
EMBED_IN   := $(sort $(wildcard schemas/*.json schemas/*/*.json prompts/*.txt prompts/*/*.txt web/*.html web/*.css web/*.js))
LIB_SRC    := $(GEOM_SRC) $(TOOLS_SRC) $(ENGINE_SRC)
LIB_OBJ    := $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/embedded.o
MAIN_OBJ   := $(BUILD)/engine/main.o
TEST_SRC   := $(wildcard tests/unit/test_*.c)
TEST_BIN   := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
STUB_SRC   := $(wildcard tests/stub/*.c)
STUB_BIN   := $(if $(STUB_SRC),$(BUILD)/tests/llm_stub)
BENCH_SRC  := $(wildcard bench/*.c)
BENCH_BIN  := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

.PHONY: all deps test check bench demo clean lint fuzz
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

$(BUILD)/gen/embedded.o: $(BUILD)/gen/embedded.c
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libproxima.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Wno-missing-prototypes -o $@ $< $(BUILD)/libproxima.a $(LDFLAGS) $(LDLIBS) -lcmocka

$(BUILD)/tests/llm_stub: $(STUB_SRC) $(BUILD)/libproxima.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $(STUB_SRC) $(BUILD)/libproxima.a $(LDFLAGS) $(LDLIBS)

# ffmpeg is only needed by the tests of export --frames and the video review test.
test: deps $(BUILD)/proxima $(TEST_BIN) $(STUB_BIN)
	@sh scripts/setup.sh ffmpeg
	@BUILD=$(BUILD) sh tests/run.sh

check:
	@$(MAKE) --no-print-directory BUILD=build-check OPT="-O1 -g $(SANFLAGS)" \
		LDFLAGS="$(SANFLAGS)" test

bench: deps $(BUILD)/proxima $(BENCH_BIN) $(STUB_BIN)
	@BUILD=$(BUILD) sh bench/run.sh

$(BUILD)/bench/%: bench/%.c $(BUILD)/libproxima.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Wno-missing-prototypes -o $@ $< $(BUILD)/libproxima.a $(LDFLAGS) $(LDLIBS)

demo: all
	@sh scripts/demo.sh

# cppcheck and clang-tidy (.clang-tidy); fails on any finding.
lint:
	@BUILD=$(BUILD) sh scripts/lint.sh

# libFuzzer targets (clang); FUZZ_SECONDS per target, default 20.
fuzz:
	@sh tests/fuzz/run.sh

clean:
	rm -rf build build-check build-fuzz proxima

-include $(LIB_OBJ:.o=.d) $(MAIN_OBJ:.o=.d)
