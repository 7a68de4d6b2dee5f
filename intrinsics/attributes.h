/* attributes.h — the LLVM function attributes strobe's parts pass to one another.
 *
 * String attributes on a function, set by the compiler and read by the plugin (in
 * strobec, or in opt-22/clang-22 through StrobePlugin.so), so that the choice survives
 * a trip through a .ll or .bc file.  Nothing else spells their names.
 *
 *   STROBE_ATTR_NAME        "strobe-name"="Main.fact": the function's Haskell name,
 *                           set by the lowering on every function it emits; the
 *                           plugin selects functions by it (plugin/instrument.h)
 *   STROBE_ATTR_INSTRUMENT  "strobe-instrument" (no value): the function is opted in,
 *                           set by strobec for the functions --instrument selects */
#ifndef STROBE_ATTRIBUTES_H
#define STROBE_ATTRIBUTES_H

#define STROBE_ATTR_NAME "strobe-name"
#define STROBE_ATTR_INSTRUMENT "strobe-instrument"

/* A name's length, for LLVMCreateStringAttribute and LLVMGetStringAttributeAtIndex. */
#define STROBE_ATTR_LEN(attr) (sizeof attr - 1)

#endif
