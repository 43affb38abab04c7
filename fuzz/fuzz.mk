# The fuzz targets (docs/fuzzing.md), built with clang's libFuzzer, AddressSanitizer and
# UndefinedBehaviorSanitizer apart from the normal build: every object goes under
# $(OUT)/obj, every target to $(OUT)/bin, so the gcc build, its objects and `make
# check-layers` never see them. GNU make; invoked by `make fuzz` (fuzz/Makefile.inc), which
# hands over the emulator's sources as the normal build lists them.
#
# Variables: SRCDIR (the source tree), BUILDDIR (a configured build: its config.h), OUT,
# EMU_SOURCES (librdmaemu.so.0's C files), DAEMON_SOURCES (rdmaemud's, less rdmaemud.c, which
# the daemon target includes itself), FUZZ_CC (clang).

FUZZ_CC ?= clang
OUT ?= $(BUILDDIR)/fuzz
FUZZ_SAN = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS = -std=gnu11 -g -O1 $(FUZZ_SAN) -fsanitize=fuzzer-no-link \
	-Wall -Wextra -Wshadow -Wformat=2 -Wno-format-nonliteral -Wmissing-prototypes -Wstrict-prototypes \
	-Wno-unused-parameter -Werror
FUZZ_CPPFLAGS = -I$(SRCDIR)/include -I$(SRCDIR) -I$(BUILDDIR) \
	-DRDMAEMU_PKGLIBDIR='"/nonexistent"' -DRDMAEMU_PKGDATADIR='"$(SRCDIR)"' \
	-DRDMAEMU_BUILDDIR='"$(BUILDDIR)"' -DRDMAEMU_SRCDIR='"$(SRCDIR)"' \
	-DFUZZ_FIXTURES='"$(SRCDIR)/fixtures"'
FUZZ_LIBS = -lpcap -ldl -lpthread

TARGETS = fabric topology hostsdata saquery pkt mad cm acm ucma daemon

EMU_OBJS = $(patsubst %.c,$(OUT)/obj/%.o,$(filter %.c,$(EMU_SOURCES)))
DAEMON_OBJS = $(patsubst %.c,$(OUT)/obj/%.o,$(filter-out %/rdmaemud.c,$(filter %.c,$(DAEMON_SOURCES))))
COMMON_OBJ = $(OUT)/obj/fuzz/fuzz_env.o $(OUT)/obj/fuzz/fabric_use.o

all: $(addprefix $(OUT)/bin/fuzz_,$(TARGETS))

$(OUT)/obj/%.o: $(SRCDIR)/%.c
	@mkdir -p $(dir $@)
	@echo "  FUZZCC   $*.c"
	@$(FUZZ_CC) $(FUZZ_CPPFLAGS) $(FUZZ_CFLAGS) -MMD -MP -c -o $@ $<

# Every emulator object is linked in (not archived) so that their constructors, which
# register the layers' engine hooks, all run as they do in the shared library.
$(OUT)/bin/fuzz_daemon: $(OUT)/obj/fuzz/daemon.o $(OUT)/obj/fuzz/daemon_harness.o $(COMMON_OBJ) $(EMU_OBJS) $(DAEMON_OBJS)
	@mkdir -p $(dir $@)
	@echo "  FUZZLD   $@"
	@$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(FUZZ_LIBS)

$(OUT)/bin/fuzz_ucma: $(OUT)/obj/fuzz/ucma.o $(OUT)/obj/fuzz/daemon_harness.o $(COMMON_OBJ) $(EMU_OBJS) $(DAEMON_OBJS)
	@mkdir -p $(dir $@)
	@echo "  FUZZLD   $@"
	@$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(FUZZ_LIBS)

$(OUT)/bin/fuzz_%: $(OUT)/obj/fuzz/%.o $(COMMON_OBJ) $(EMU_OBJS)
	@mkdir -p $(dir $@)
	@echo "  FUZZLD   $@"
	@$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(FUZZ_LIBS)

.PHONY: all
.SECONDARY:

-include $(shell find $(OUT)/obj -name '*.d' 2>/dev/null)
