{-# LANGUAGE CPP, GADTs #-}
-- | What differs between the GHC versions the plugin is written for: GHC 9.0, where
-- printers find the platform in the DynFlags of their context, and 9.2 and later,
-- where they take it as an argument (@pdoc@); a load's alignment (9.4); a source
-- note's name as a 'LexicalFastString' (9.8); Cmm's printers and 'revPostorder' in
-- "GHC.Cmm" (9.6); where a module's dumps go (9.4); Core's ticks and case alternatives
-- (9.2); a LabelMap's functions, relaxed loads (9.10).  GHC 9.0.2, 9.6.6 and 9.10.3
-- build it here; the rest follows those versions' sources.  (How a plugin reaches the
-- hooks differs too: "Strobe.Plugin".)
module Strobe.Compat
  ( pprP, label, asmLabel, render, loadOf, relaxedReadOf, storeOf, noteName, sourcePrefix
  , isDynamicWay
  , CoreTick, mapAlt, noteString, revPostorder, mapElems, hasStubs
  ) where

import GHC.Cmm
#if __GLASGOW_HASKELL__ < 906
import GHC.Cmm.CLabel (CLabel, pprCLabel)
#else
import GHC.Cmm.CLabel (CLabel, pprAsmLabel)
#endif
import GHC.Plugins
#if __GLASGOW_HASKELL__ < 906
-- Cmm's printers (instances), and the dump's block order, were GHC.Cmm's from 9.6 on.
import GHC.Cmm.Ppr ()
import GHC.Cmm.Utils (revPostorder)
#endif
#if __GLASGOW_HASKELL__ < 902
import GHC.Driver.Ways (Way (WayDyn), hasWay)
#else
import GHC.Platform (Platform)
import GHC.Platform.Ways (Way (WayDyn), hasWay)
import GHC.Types.Tickish (CoreTickish, GenTickish (SourceNote))
#endif
#if __GLASGOW_HASKELL__ >= 908
import GHC.Data.FastString (LexicalFastString (..))
#endif
-- A module's C stubs: GHC.Driver.Types's in 9.0, GHC.Types.ForeignStubs's from 9.2.
#if __GLASGOW_HASKELL__ < 902
import GHC.Driver.Types (ForeignStubs (..))
#else
import GHC.Types.ForeignStubs (ForeignStubs (..), getCStub)
#endif
-- A LabelMap's functions: GHC.Cmm.Dataflow.Label's from 9.10 on.
#if __GLASGOW_HASKELL__ < 910
import GHC.Cmm.Dataflow.Collections (mapElems)
#else
import GHC.Cmm.Dataflow.Label (mapElems)
#endif

-- | What GHC prints with the platform from 9.2 on: declarations, info tables,
-- statements, foreign targets, literals.
#if __GLASGOW_HASKELL__ < 902
pprP :: Outputable a => DynFlags -> a -> SDoc
pprP _ = ppr
#else
pprP :: OutputableP Platform a => DynFlags -> a -> SDoc
pprP dflags = pdoc (targetPlatform dflags)
#endif

-- | A label as GHC's dumps spell it (@Main.$wgo_info@).
label :: DynFlags -> CLabel -> SDoc
label = pprP

-- | A label as GHC's assembly spells it, its object symbol (@Main_zdwgo_info@).
asmLabel :: DynFlags -> CLabel -> SDoc
#if __GLASGOW_HASKELL__ < 902
asmLabel dflags = withPprStyle (mkCodeStyle AsmStyle) . pprCLabel dflags
#elif __GLASGOW_HASKELL__ < 906
asmLabel dflags = pprCLabel (targetPlatform dflags) AsmStyle
#else
-- 9.6: pprCLabel is C's spelling, and a name z-encodes only in code style, which the
-- label no longer sets itself.
asmLabel dflags = withPprStyle PprCode . pprAsmLabel (targetPlatform dflags)
#endif

-- | A document as GHC's dumps render it: every name qualified with its module.
render :: DynFlags -> SDoc -> String
#if __GLASGOW_HASKELL__ < 902
render dflags = renderWithStyle (initSDocContext dflags (mkDumpStyle alwaysQualify))
#else
render dflags = renderWithContext (initSDocContext dflags (mkDumpStyle alwaysQualify))
#endif

-- | A load's address, type, and whether GHC marks it unaligned (9.4 and later:
-- @I64^[e]@; 9.0 has no such loads).
loadOf :: CmmExpr -> Maybe (CmmExpr, CmmType, Bool)
#if __GLASGOW_HASKELL__ < 904
loadOf (CmmLoad a ty) = Just (a, ty, False)
#else
loadOf (CmmLoad a ty align) = Just (a, ty, align == Unaligned)
#endif
loadOf _ = Nothing

-- | A relaxed atomic load's address and width: GHC 9.10 loads every closure's info
-- pointer with @MO_RelaxedRead@ and prints it @I64![e]@ (9.0 has no such loads).
relaxedReadOf :: CmmExpr -> Maybe (CmmExpr, Width)
#if __GLASGOW_HASKELL__ >= 910
relaxedReadOf (CmmMachOp (MO_RelaxedRead w) [a]) = Just (a, w)
#endif
relaxedReadOf _ = Nothing

-- | A store's address, value, and whether it is unaligned (@I64^[e] = v;@, 9.4).
storeOf :: CmmNode e x -> Maybe (CmmExpr, CmmExpr, Bool)
#if __GLASGOW_HASKELL__ < 904
storeOf (CmmStore a v) = Just (a, v, False)
#else
storeOf (CmmStore a v align) = Just (a, v, align == Unaligned)
#endif
storeOf _ = Nothing

-- | A source note's file and name.
noteName :: CmmTickish -> Maybe (FilePath, String)
#if __GLASGOW_HASKELL__ < 908
noteName (SourceNote sp name) = Just (unpackFS (srcSpanFile sp), name)
#else
noteName (SourceNote sp (LexicalFastString name)) = Just (unpackFS (srcSpanFile sp), unpackFS name)
#endif
noteName _ = Nothing

-- | The module's source file without its extension, with a final dot (@src/A/B.@):
-- GHC sets it for the module's dumps.
sourcePrefix :: DynFlags -> Maybe FilePath
#if __GLASGOW_HASKELL__ < 904
sourcePrefix = dumpPrefix
#else
sourcePrefix = Just . dumpPrefix
#endif

-- | Whether GHC compiles the dynamic way (@-dynamic@, or the second pass of
-- @-dynamic-too@).
isDynamicWay :: DynFlags -> Bool
isDynamicWay dflags = ways dflags `hasWay` WayDyn

-- | A source note's name as a string.
#if __GLASGOW_HASKELL__ < 908
noteString :: String -> String
noteString = id
#else
noteString :: LexicalFastString -> String
noteString (LexicalFastString name) = unpackFS name
#endif

-- | A tick in Core.
#if __GLASGOW_HASKELL__ < 902
type CoreTick = Tickish Id
#else
type CoreTick = CoreTickish
#endif

-- | A case alternative with its right-hand side changed.
mapAlt :: (CoreExpr -> CoreExpr) -> CoreAlt -> CoreAlt
#if __GLASGOW_HASKELL__ < 902
mapAlt f (con, bs, rhs) = (con, bs, f rhs)
#else
mapAlt f (Alt con bs rhs) = Alt con bs (f rhs)
#endif

-- | Whether GHC compiles C stubs for the module (a @foreign export@'s) and merges their
-- object with the module's: GHC writes the stub's C file when its text is not empty.
hasStubs :: DynFlags -> ModGuts -> Bool
hasStubs dflags guts = case mg_foreign guts of
  NoStubs -> False
#if __GLASGOW_HASKELL__ < 902
  ForeignStubs _ c -> not (null (showSDoc dflags c))
#else
  ForeignStubs _ c -> not (null (showSDoc dflags (getCStub c)))
#endif
