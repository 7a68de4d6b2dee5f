{-# LANGUAGE CPP #-}
-- | The one change the plugin makes to a module's Core: source notes on variables go.
--
-- Note [Notes on variables]
-- ~~~~~~~~~~~~~~~~~~~~~~~~~
-- With @-g@, GHC gives every expression a source note, a variable's occurrence too
-- (@src<Other.hs:24:15> n@).  Such a note marks no code of its own: evaluating the
-- variable runs the code of what it is bound to, which has its own notes.  But in the
-- dynamic stack every note is a frame of its binding, and a variable's note shows as
-- one where nothing of that binding runs:
--
--   * After inlining, an argument's note lands in the callee's body.  In
--
--     > other n = do { r <- other2 n; print r }        -- other2 inlined at -O0
--
--     other2's test @n < 0@ evaluates @src<29:5> src<24:15> src<39:9> d@: other2's
--     @n@, which is other's @n@, which is main's @d@.  Each note ticked where other2's
--     code runs, and the report read @other2 ← main ← other ← main@.
--   * A note on a variable that GHC inlines stays on the code inlined: in
--     @summarize xs = Stats n avg where avg = ...@, the desugarer made the field a
--     thunk @src<9:41-43> src<(12,5)-(14,34)> ...@, avg's occurrence over avg's
--     definition, and forcing it later ran a frame of @summarize@, which had returned
--     long before, under avg's.  Such an outer note is named as the inner one (GHC
--     names a note by the bindings it is in, and both are in summarize's), and the
--     inner one's span is not in its own: it goes too.  So does a top-level binding's
--     that GHC inlined where it was used once (@map parseOrder@: the occurrence's
--     note over parseOrder's definition's, which is named parseOrder), when the
--     outer note spans exactly the name; a call's note (@other2 n@) stays.
--
-- So a source note whose expression is a variable (or a literal, or either applied to
-- types or cast, or a constructor applied to them: an argument @0@ of type Int that
-- GHC specialised into the callee's loop ticked as the caller's frame at each
-- iteration) goes, and so does a variable's note over its binding's inlined
-- definition; but not a binding's own notes on its right-hand side (@main = realMain@
-- keeps @main@'s frame).  Removing a tick never changes what a program computes, and
-- the code is then what GHC makes without @-g@: no thunk for a noted variable.  The
-- lines of the surrounding expression cover the variable's code.
module Strobe.Notes (dropVariableNotes) where

import GHC.Plugins
#if __GLASGOW_HASKELL__ >= 902
import GHC.Types.Tickish (GenTickish (SourceNote))
#endif

import Strobe.Compat (CoreTick, mapAlt, noteString)

-- | The Core pass.  It runs first in GHC's pipeline, before a variable's note can be
-- on what inlining puts in its place, and last, for the variables that inlining
-- left (@src<f x> src<f's definition> x@).
dropVariableNotes :: ModGuts -> CoreM ModGuts
dropVariableNotes = bindsOnlyPass (pure . map bind)

bind :: CoreBind -> CoreBind
bind (NonRec b rhs) = NonRec b (binding rhs)
bind (Rec bs) = Rec [(b, binding rhs) | (b, rhs) <- bs]

-- | A right-hand side: its leading notes and lambdas are the binding's own.
binding :: CoreExpr -> CoreExpr
binding (Tick t e) = Tick t (binding e)
binding (Lam b e) = Lam b (binding e)
binding e = expr e

expr :: CoreExpr -> CoreExpr
expr e = case e of
  Tick t x
    | isSourceNote t, simple x' || inlinedDefinition t x' -> x'
    | otherwise -> Tick t x'
    where x' = expr x
  App f a -> App (expr f) (expr a)
  Lam b x -> Lam b (expr x)
  Let bs x -> Let (bind bs) (expr x)
  Case s b ty alts -> Case (expr s) b ty (map (mapAlt expr) alts)
  Cast x co -> Cast (expr x) co
  _ -> e

-- | The note of a binding's definition, inlined where the outer note was its variable:
-- a local binding's (named alike: both are in the same binding's), or a top-level
-- one's, named by itself, whose variable spans its name exactly.
inlinedDefinition :: CoreTick -> CoreExpr -> Bool
inlinedDefinition t (Tick d _) = case (noteOf t, noteOf d) of
  (Just (use, name), Just (def, name')) ->
    not (use `containsSpan` def) && (name == name' || spansName use name')
  _ -> False
inlinedDefinition _ _ = False

-- | The span is one line, as wide as the name's last component (@parseOrder@, not the
-- call @other2 n@ whose callee GHC inlined).
spansName :: RealSrcSpan -> String -> Bool
spansName sp name =
  srcSpanStartLine sp == srcSpanEndLine sp
    && srcSpanEndCol sp - srcSpanStartCol sp == length (lastComponent name)
  where lastComponent = reverse . takeWhile (/= '.') . reverse

-- | A variable or a literal, applied to types, cast, or under notes of its own; or a
-- constructor applied to such (the literal @1000000@ at type Int is @I# 1000000#@).
simple :: CoreExpr -> Bool
simple e = case e of
  Var _ -> True
  Lit _ -> True
  App f (Type _) -> simple f
  App f a -> constructor f && simple a
  Cast x _ -> simple x
  Tick t x -> isSourceNote t && simple x
  _ -> False
  where
    constructor f = case collectArgs f of
      (Var v, args) -> isDataConWorkId v && all simple args
      _ -> False

isSourceNote :: CoreTick -> Bool
isSourceNote SourceNote {} = True
isSourceNote _ = False

noteOf :: CoreTick -> Maybe (RealSrcSpan, String)
noteOf (SourceNote sp name) = Just (sp, noteString name)
noteOf _ = Nothing
