# Unit tests (cmocka), included by the top-level Makefile.
#   make unit                      build and run every tests/unit/test_NAME.c
#   make BUILD=build/asan SAN=... unit   the same under sanitizers
# Each test links the compiler's objects except main.o into
# $(BUILD)/tests/unit_NAME. The target fails if any test program fails.
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS = $(patsubst tests/unit/test_%.c,$(BUILD)/tests/unit_%,$(UNIT_SRCS))
UNIT_OBJS = $(filter-out $(BUILD)/compiler/main.o,$(OBJS))

$(BUILD)/tests/unit_%: tests/unit/test_%.c $(wildcard tests/unit/*.h) $(UNIT_OBJS) $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(O2C_CFLAGS) -o $@ $< $(UNIT_OBJS) -lcmocka $(LDLIBS)

.PHONY: unit
unit: $(UNIT_BINS)
	@failed=""; \
	for t in $(UNIT_BINS); do \
	  echo "== $$t"; \
	  $$t || failed="$$failed $${t##*/}"; \
	done; \
	if [ -n "$$failed" ]; then echo "unit tests FAILED:$$failed"; exit 1; fi; \
	echo "unit tests: all $(words $(UNIT_BINS)) programs passed"

# the calibrators on a file of values, for tests/calib/test_calib.py (not a unit test program)
$(BUILD)/tests/calib_hist: tests/unit/calib_hist.c $(UNIT_OBJS) $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(O2C_CFLAGS) -o $@ $< $(UNIT_OBJS) $(LDLIBS)
