# onnx2c for Makefiles: compiles an ONNX model to C when the model (or
# onnx2c) changes.
#
#   include /path/to/onnx2c/integration/onnx2c.mk
#   $(eval $(call onnx2c_model,net,model.onnx,--target cortex-m))
#   firmware.elf: main.o $(ONNX2C_OBJS)
#   main.o: CFLAGS += $(ONNX2C_INCLUDES)
#   main.o: $(ONNX2C_HEADERS)
#
# $(call onnx2c_model,NAME,MODEL,FLAGS) writes $(ONNX2C_OUT)/NAME.c and .h
# (`onnx2c MODEL -o $(ONNX2C_OUT)/NAME.c --name NAME FLAGS`) and appends to
# ONNX2C_SOURCES, ONNX2C_HEADERS and ONNX2C_OBJS (NAME.o, built from NAME.c
# by make's rule for C with $(CC) $(CFLAGS)). ONNX2C_INCLUDES holds the -I
# flag of the folder. Variables: ONNX2C (the program; default onnx2c on
# PATH), ONNX2C_OUT (default onnx2c-out).
ONNX2C ?= onnx2c
ONNX2C_OUT ?= onnx2c-out
ONNX2C_INCLUDES = -I$(ONNX2C_OUT)
# the program itself as a prerequisite where it is a file (a path, not a name on PATH)
ONNX2C_DEP = $(if $(findstring /,$(ONNX2C)),$(ONNX2C))

define onnx2c_model
$(ONNX2C_OUT)/$(1).c: $(2) $$(ONNX2C_DEP)
	@mkdir -p $(ONNX2C_OUT)
	$$(ONNX2C) $(2) -o $(ONNX2C_OUT)/$(1).c --name $(1) $(3)
$(ONNX2C_OUT)/$(1).h: $(ONNX2C_OUT)/$(1).c
$(ONNX2C_OUT)/$(1).o: $(ONNX2C_OUT)/$(1).c $(ONNX2C_OUT)/$(1).h
	$$(CC) $$(CFLAGS) $$(ONNX2C_CFLAGS) -c $(ONNX2C_OUT)/$(1).c -o $(ONNX2C_OUT)/$(1).o
ONNX2C_SOURCES += $(ONNX2C_OUT)/$(1).c
ONNX2C_HEADERS += $(ONNX2C_OUT)/$(1).h
ONNX2C_OBJS += $(ONNX2C_OUT)/$(1).o
endef
