{-# LANGUAGE CPP #-}
-- | strobe's GHC plugin: each module's Cmm, exactly as GHC holds it, for strobec.
--
-- strobe-ghc runs ghc with
--
-- > -package-db DB -plugin-package strobe-plugin -fplugin Strobe.Plugin
-- > -fplugin-opt Strobe.Plugin:out=DIR
--
-- The plugin sets GHC's 'cmmToRawCmmHook', the step between the Cmm pipeline and the
-- code generator.  The hook reads the whole stream of the module's Cmm (the symbolic
-- groups, info tables and all), writes it to a file in DIR in the syntax strobec reads
-- ("Strobe.Print", docs/cmm-syntax.md), and hands the native code generator one string
-- in its place: the path of that file, which strobe-ghc's assembler mode finds in the
-- assembly and lowers with strobec.  GHC thus generates no code strobe would throw
-- away.  Two kinds of Cmm keep GHC's own code: a module's dynamic way (@-dynamic-too@,
-- @.dyn_o@; shared libraries stay GHC's) and Cmm that is not a Haskell module's (a
-- @.cmm@ source).
--
-- One Core pass, first and last in GHC's pipeline, drops the source notes on
-- variables, which mark no code of their own ("Strobe.Notes").
--
-- This module is the only one that knows how a plugin reaches GHC's hooks (CPP below):
-- GHC 9.0 sets them in DynFlags through 'dynflagsPlugin', 9.2 and later in the HscEnv
-- through 'driverPlugin'.  The rest that differs between versions is "Strobe.Compat".
module Strobe.Plugin (plugin) where

import qualified Data.ByteString.Char8 as B8
import Data.IORef
import qualified Data.Set as Set
import System.IO.Unsafe (unsafePerformIO)
import Data.List (isPrefixOf)
import GHC.Fingerprint (fingerprintString)
import Numeric (showHex)
import System.Directory (createDirectoryIfMissing, makeAbsolute)
import System.FilePath (dropExtension, normalise)
import System.IO

import GHC.Cmm
import GHC.Cmm.CLabel (mkStringLitLabel)
import GHC.Driver.Hooks (Hooks (..))
import GHC.Plugins hiding ((<>))
import qualified GHC.Data.Stream as Stream
import GHC.Types.Unique (mkUnique)
import GHC.Cmm.Info (cmmToRawCmm)
#if __GLASGOW_HASKELL__ >= 902
import GHC.Driver.Env (HscEnv (..))
#endif

import Strobe.Compat (hasStubs, isDynamicWay, sourcePrefix)
import Strobe.Notes (dropVariableNotes)
import Strobe.Print

-- | The version of what the plugin writes: a module compiled with another one is
-- compiled again ('pluginRecompile').
formatVersion :: String
formatVersion = "strobe-plugin 2"

plugin :: Plugin
plugin = defaultPlugin
#if __GLASGOW_HASKELL__ < 902
  { dynflagsPlugin = \opts dflags ->
      pure dflags { hooks = (hooks dflags) { cmmToRawCmmHook = Just (hook opts) } }
#else
  { driverPlugin = \opts env ->
      pure env { hsc_hooks = (hsc_hooks env) { cmmToRawCmmHook = Just (hook opts env) } }
#endif
  , installCoreToDos = \_ todos -> pure ([notes, stubs] ++ todos ++ [notes])
    -- The output directory changes with every strobe-ghc run and says nothing about
    -- the object; strobe-ghc's other options reach GHC's fingerprint by -optP-D.
  , pluginRecompile = \_ -> pure (MaybeRecompile (fingerprintString formatVersion))
  }

-- | Before GHC's Core pipeline, and after it (Note [Notes on variables]).
notes :: CoreToDo
notes = CoreDoPluginPass "strobe: notes on variables" dropVariableNotes

-- | The modules of this GHC process with C stubs (a @foreign export@'s), which GHC
-- merges with the module's object right after the assembler: the file's first line says
-- so, and strobe-ghc lowers such a module at once (Note [Modules with stubs]).
modulesWithStubs :: IORef (Set.Set Module)
modulesWithStubs = unsafePerformIO (newIORef Set.empty)
{-# NOINLINE modulesWithStubs #-}

-- | Records whether the module has C stubs (desugaring made them: Core has them all).
stubs :: CoreToDo
stubs = CoreDoPluginPass "strobe: C stubs" $ \guts -> do
  dflags <- getDynFlags
  liftIO (modifyIORef' modulesWithStubs (if hasStubs dflags guts then Set.insert (mg_module guts)
                                                                 else Set.delete (mg_module guts)))
  pure guts

-- Note [Modules with stubs]: GHC 9.0 assembles such a module into its temporary
-- directory and merges the object with the stub's there; 9.10 assembles it to
-- @B.o.tmp@, as any module, and merges that with the stub's object into @B.o@ at once.
-- Either way, strobec's object must be in place when the assembler returns: strobe-ghc
-- cannot tell 9.10's case from the paths, and reads @stub@ in the file's first line.

-- | The directory of @out=DIR@, or the current directory.
outDir :: [CommandLineOption] -> FilePath
outDir opts = last ("." : [drop 4 o | o <- opts, "out=" `isPrefixOf` o])

#if __GLASGOW_HASKELL__ < 902
hook :: [CommandLineOption] -> DynFlags -> Maybe Module -> Stream.Stream IO CmmGroupSRTs a
     -> IO (Stream.Stream IO RawCmmGroup a)
hook opts dflags mmod cmm = case mmod of
  Just m | not (isDynamicWay dflags) -> writeModule opts dflags m cmm
  _ -> cmmToRawCmm dflags cmm
#else
hook :: [CommandLineOption] -> HscEnv -> DynFlags -> Maybe Module
     -> Stream.Stream IO CmmGroupSRTs a -> IO (Stream.Stream IO RawCmmGroup a)
hook opts env dflags mmod cmm = case mmod of
  Just m | not (isDynamicWay dflags) -> writeModule opts dflags m cmm
  _ -> cmmToRawCmm (hsc_logger env) (targetProfile dflags) cmm
#endif

-- | Writes the module's Cmm to a file of its own, and returns the stream the code
-- generator gets instead: the file's path, and the result of GHC's stream (what the
-- module's interface records of its code).
writeModule :: [CommandLineOption] -> DynFlags -> Module -> Stream.Stream IO CmmGroupSRTs a
            -> IO (Stream.Stream IO RawCmmGroup a)
writeModule opts dflags m cmm = do
  let dir = outDir opts
      name = moduleNameString (moduleName m)
  createDirectoryIfMissing True dir
  (path0, h) <- openTempFile dir (name ++ ".cmm")
  path <- makeAbsolute path0
  hSetEncoding h utf8
  withStub <- Set.member m <$> readIORef modulesWithStubs
  hPutStr h (header dflags m withStub)
  labels <- newIORef emptyLabels
  result <- consumeStream cmm $ \group -> do
    seen <- readIORef labels
    let (text, seen') = printGroup dflags (qualifiedNoteName dflags m) seen group
    hPutStr h text
    writeIORef labels seen'
  readIORef labels >>= hPutStr h . printSymbols
  hClose h
  pure $ do
    Stream.yield [marker path]
    pure result

#if __GLASGOW_HASKELL__ < 902
consumeStream :: Stream.Stream IO x r -> (x -> IO ()) -> IO r
consumeStream = Stream.consume
#else
consumeStream :: Stream.Stream IO x r -> (x -> IO ()) -> IO r
consumeStream s = Stream.consume s id
#endif

-- | The code generator's whole input in place of the module's code: a string
-- @strobe-cmm:HEX@, HEX the UTF-8 bytes of the file's path, in a local symbol.
-- strobe-ghc's assembler mode finds it in the assembly.
marker :: FilePath -> GenCmmDecl RawCmmStatics h g
marker path = CmmData (Section CString lbl) (CmmStaticsRaw lbl [CmmString bytes])
  where
    lbl = mkStringLitLabel (mkUnique 's' 0)
    bytes = B8.pack ("strobe-cmm:" ++ concatMap hex (B8.unpack (bytesOfString path)))
    hex c = let s = showHex (fromEnum c) "" in if length s < 2 then '0' : s else s

bytesOfString :: String -> B8.ByteString
bytesOfString = bytesFS . mkFastString

-- | The file's first line: what strobe-ghc needs to know of the module.  The prefix is
-- where GHC would write the module's dumps: its source file without the extension.
header :: DynFlags -> Module -> Bool -> String
header dflags m withStub =
  "// " ++ formatVersion ++ ": module " ++ moduleNameString (moduleName m)
    ++ ", unit " ++ showSDoc dflags (ppr (moduleUnit m))
    ++ (if withStub then ", stub" else "")
    ++ maybe "" (", prefix " ++) (sourcePrefix dflags) ++ "\n"

-- | The name a source note gets in the file (Note [Source note names]).
--
-- Note [Source note names]: GHC names a source note by the path of bindings it is in,
-- without the module (@stepB.go@), as @-prof@ names cost centres.  A note in the
-- module's own source is the module's, and gets its name (@Main.stepB.go@, a frame's
-- name in strobe's dynamic stack and DWARF); a note in another file came with code
-- GHC inlined from another module, whose name GHC does not keep, and keeps its name
-- as GHC has it.
qualifiedNoteName :: DynFlags -> Module -> FilePath -> String -> String
qualifiedNoteName dflags m file name = case sourcePrefix dflags of
  Just p | not (null p), normalise (dropExtension file) == normalise (init p) ->
    moduleNameString (moduleName m) ++ "." ++ name
  _ -> name
