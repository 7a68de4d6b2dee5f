// StrobePlugin.cpp — registers the module pass strobe-instrument for opt-22
// (-load-pass-plugin, -passes=strobe-instrument) and clang-22 (-fpass-plugin, at the
// start of every pipeline).  The work is C: instrument.c (docs/design.md).
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Plugins/PassPlugin.h"
#include "llvm/Support/CommandLine.h"

#include "llvm-c/Core.h"

#include <cstdlib>

#include "instrument.h"

using namespace llvm;

static cl::opt<std::string> InstrumentGlobs(
    "strobe-instrument", cl::value_desc("GLOB[,GLOB...]"),
    cl::desc("strobe-instrument: instrument the functions whose Haskell names match"));
static cl::opt<std::string> InstrumentList(
    "strobe-instrument-list", cl::value_desc("FILE"),
    cl::desc("strobe-instrument: an XRay-style list of [always]/[never] fun: patterns"));
static cl::opt<bool> PopsEverywhere(
    "strobe-pops-everywhere",
    cl::desc("strobe-instrument: keep pop and ret checks in every function"));
static cl::opt<bool> CountTicks(
    "strobe-count-ticks",
    cl::desc("strobe-instrument: count every tick in the runtime's statistics"));
static cl::opt<bool> LocalExec(
    "strobe-local-exec",
    cl::desc("strobe-instrument: the code goes into the executable that links "
             "libstrobe-rt.a (local-exec TLS)"));

namespace {
struct StrobeInstrument : PassInfoMixin<StrobeInstrument> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    SpOptions O;
    sp_options_init(&O);
    O.pops_everywhere = PopsEverywhere;
    O.count_ticks = CountTicks;
    O.local_exec = LocalExec;
    char *Error = nullptr;
    bool Changed = sp_module_has_intrinsics(wrap(&M));
    bool Ok = sp_options_add_globs(&O, InstrumentGlobs.c_str(), &Error) &&
              (InstrumentList.empty() ||
               sp_options_parse_list(&O, InstrumentList.c_str(), &Error)) &&
              sp_instrument_module(wrap(&M), &O, &Error);
    sp_options_free(&O);
    if (!Ok) {
      M.getContext().diagnose(DiagnosticInfoGeneric(Error ? Error : "strobe-instrument: failed"));
      std::free(Error);
      return PreservedAnalyses::all();
    }
    return Changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }
  static bool isRequired() { return true; } // also at -O0 and in optnone functions
};
} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "StrobePlugin", "0.1", [](PassBuilder &PB) {
            PB.registerPipelineParsingCallback(
                [](StringRef Name, ModulePassManager &MPM, ArrayRef<PassBuilder::PipelineElement>) {
                  if (Name != "strobe-instrument") return false;
                  MPM.addPass(StrobeInstrument());
                  return true;
                });
            PB.registerPipelineStartEPCallback(
                [](ModulePassManager &MPM, OptimizationLevel) { MPM.addPass(StrobeInstrument()); });
          }};
}
