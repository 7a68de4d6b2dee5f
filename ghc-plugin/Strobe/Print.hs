{-# LANGUAGE GADTs #-}
-- | Cmm in the syntax strobec reads (docs/cmm-syntax.md): GHC's `-ddump-cmm` text,
-- with what that text leaves out written in.
--
-- GHC's printer is for people.  Three of the things it drops matter to strobe, and
-- this printer keeps them:
--
--  * the tree of an expression: GHC prints the operands of @&@, @|@, @^@, @~@ and a
--    prefix @-@ bare, so @x | (y & z)@ and @(x | y) & z@ read alike.  Here every
--    operand that is itself an operator application is in parentheses;
--  * the object symbol of every label and whether it is global: GHC's dump names
--    @Main.$wgo_info@, its object @Main_zdwgo_info@, and a name internal to the module
--    (@lvl_r2X3_closure@) is the assembler-local @.Lr2X3_closure@.  The labels stay as
--    the dump spells them (strobec takes Haskell names from them), and a @symbols@
--    table at the end of the file gives each one's symbol, from GHC's own label
--    printer, and its visibility;
--  * the binding a source note belongs to (its @sourceName@, what @-prof@ names cost
--    centres by): @//tick src<Main.hs:3:1-20> "stepB"@.
--
-- Everything else (block labels, tick scopes, info tables, data, foreign-call
-- conventions) is printed by GHC's own printer, as in its dumps.
module Strobe.Print (Labels, emptyLabels, NoteName, printGroup, printSymbols) where

import Prelude hiding ((<>))

import Data.Char (isDigit)
import qualified Data.Map.Strict as Map
import qualified Data.Set as Set
import Data.Foldable (toList) -- a case's values: a list, a NonEmpty from 9.6
import Data.List (foldl')
import qualified Data.ByteString as BS

import GHC.Cmm
import GHC.Cmm.CLabel (CLabel, externallyVisibleCLabel)
import GHC.Cmm.Dataflow.Block (blockSplit, blockToList)
import GHC.Cmm.Switch (switchTargetsFallThrough, switchTargetsRange)
import GHC.Cmm.Dataflow.Graph (entryLabel)
import GHC.Cmm.Utils (toBlockListEntryFirst)
import GHC.Plugins hiding ((<>))
import GHC.Utils.Outputable

import Strobe.Compat

-- | Every label printed so far: its dump spelling -> (object symbol, global).
type Labels = Map.Map String (String, Bool)

emptyLabels :: Labels
emptyLabels = Map.empty

-- | How a source note in a file is named: the file and GHC's name of the note.
type NoteName = FilePath -> String -> String

-- | One group of the stream (a `[ … ]` section of a dump), and the labels it adds.
printGroup :: DynFlags -> NoteName -> Labels -> CmmGroupSRTs -> (String, Labels)
printGroup dflags names seen decls = (render dflags doc ++ "\n", seen')
  where
    doc = text "[" <> vcat (punctuate comma (map (decl dflags names) decls)) <> text "]"
    seen' = foldl' add seen (concatMap declLabels decls)
    add m l = Map.insertWith (\_ old -> old) (render dflags (label dflags l))
                             (render dflags (asmLabel dflags l), externallyVisibleCLabel l) m

-- | The table of every label's symbol, after the last group:
--
-- > symbols {
-- >     Main.main_closure = ZCMain_main_closure global;
-- >     lvl_r2X3_closure = .Lr2X3_closure local;
-- > }
printSymbols :: Labels -> String
printSymbols m = "symbols {\n" ++ concatMap row (Map.toList m) ++ "}\n"
  where
    row (l, (s, g)) = "    " ++ l ++ " = " ++ s ++ (if g then " global;\n" else " local;\n")

-- ---- declarations -------------------------------------------------------------------

decl :: DynFlags -> NoteName -> GenCmmDecl RawCmmStatics CmmTopInfo CmmGraph -> SDoc
decl dflags _ d@(CmmData _ _) = pprP dflags d
decl dflags names (CmmProc info lbl live graph) =
  vcat [ label dflags lbl <> text "() { //  " <> brackets (hsep (punctuate comma (map ppr live)))
       , nest 8 (lbrace <+> pprP dflags info $$ rbrace)
       , nest 4 (text "{offset" $$ nest 2 (vcat (map (block dflags names) blocks)) $$ rbrace)
       , rbrace ]
  where
    -- GHC's dump order (from the entry, in reverse postorder), which strobec's line
    -- tables follow as they follow the dumps', then any block that order leaves out
    -- (unreachable from the entry), so that none is lost.
    reached = revPostorder graph
    seen = Set.fromList (map entryLabel reached)
    blocks = reached ++ [b | b <- toBlockListEntryFirst graph, not (entryLabel b `Set.member` seen)]

block :: DynFlags -> NoteName -> CmmBlock -> SDoc
block dflags names b =
  entry $$ nest 4 (vcat (map (stmt dflags names) (blockToList middle)) $$ stmt dflags names end)
  where
    (CmmEntry lbl scope, middle, end) = blockSplit b
    entry = ppr lbl <> colon <+> text "//" <+> ppr scope

-- | A statement, in GHC's layout (GHC.Cmm.Ppr's pprNode) with this module's expressions.
stmt :: DynFlags -> NoteName -> CmmNode e x -> SDoc
stmt dflags names n = case n of
  CmmEntry {} -> pprP dflags n
  CmmComment {} -> pprP dflags n
  CmmTick t | Just (file, name) <- noteName t ->
    text "//tick" <+> ppr t <+> text (cmmString (names file name))
  CmmTick {} -> pprP dflags n
  CmmUnwind regs ->
    text "unwind " <> commas [ppr r <+> equals <+> unwound e | (r, e) <- regs] <> semi
  CmmAssign reg e -> ppr reg <+> equals <+> ex e <> semi
  _ | Just (addr, e, unaligned) <- storeOf n ->
    ppr (cmmExprType (targetPlatform dflags) e) <> alignMark unaligned <> brackets (ex addr)
      <+> equals <+> ex e <> semi
  CmmUnsafeForeignCall target results args ->
    hsep [ if null results then empty else parens (commas (map ppr results)) <+> equals
         , text "call"
         , foreignTarget target <> parens (commas (map ex args)) <> semi ]
  CmmBranch l -> text "goto" <+> ppr l <> semi
  CmmCondBranch c t f likely ->
    hsep [ text "if", parens (ex c)
         , maybe empty (\b -> parens (text "likely:" <+> ppr b)) likely
         , text "goto", ppr t <> semi, text "else goto", ppr f <> semi ]
  CmmSwitch e ids ->
    let (cases, dflt) = switchTargetsFallThrough ids
        (lo, hi) = switchTargetsRange ids
        cas (is, l) = hsep [text "case", commas (map integer (toList is)), text ": goto", ppr l <> semi]
    in hang (hsep [text "switch", brackets (hsep [integer lo, text "..", integer hi]),
                   operand e, text "{"])
            4 (vcat (map cas cases) $$ maybe empty (\l -> text "default:" <+> braces (text "goto" <+> ppr l <> semi)) dflt)
       $$ rbrace
  CmmCall tgt k regs out res upd ->
    hcat [ text "call ", callee tgt, parens (commas (map ppr regs)), space
         , maybe empty (\r -> text "returns to" <+> ppr r <> comma) k
           <+> text "args: " <> ppr out <> comma <+> text "res: " <> ppr res <> comma
           <+> text "upd: " <> ppr upd
         , semi ]
  CmmForeignCall {} -> pprP dflags n -- safe calls are gone by the time the hook sees the Cmm
  where
    ex = expr dflags
    operand = operandOf dflags
    unwound = maybe (text "Nothing") (\e -> text "Just" <+> ex e)
    callee f@(CmmLit _) = ex f
    callee f = parens (ex f)
    foreignTarget (ForeignTarget f conv) = ppr conv <+> callee f
    foreignTarget t = pprP dflags t

-- | GHC's mark of an unaligned load or store (@I64^[e]@).
alignMark :: Bool -> SDoc
alignMark unaligned = if unaligned then char '^' else empty

commas :: [SDoc] -> SDoc
commas = hsep . punctuate comma

-- ---- expressions ------------------------------------------------------------------

-- | An expression: GHC's spelling (GHC.Cmm.Ppr.Expr), with each operand of an
-- operator that is itself an operator application in parentheses.  GHC prints the same
-- operators infix (@+ - * / % == != < > <= >= << >>@, @& | ^@, prefix @~ -@); every
-- other one is @%MO_…(…)@ with its widths.
expr :: DynFlags -> CmmExpr -> SDoc
expr dflags e = case e of
  _ | Just (a, ty, unaligned) <- loadOf e -> ppr ty <> alignMark unaligned <> brackets (expr dflags a)
  _ | Just (a, w) <- relaxedReadOf e -> ppr (cmmBits w) <> char '!' <> brackets (expr dflags a)
  CmmLit l -> lit dflags l
  CmmReg r -> ppr r
  CmmRegOff r i -> parens (ppr r <+> char '+' <+> int i)
  CmmStackSlot a i -> parens (ppr a <+> char '+' <+> int i)
  CmmMachOp op [x, y] | Just o <- infixOp op -> operandOf dflags x <+> text o <+> operandOf dflags y
  CmmMachOp op [x] | Just o <- prefixOp op -> text o <> prefixOperand x
  CmmMachOp op args ->
    char '%' <> text (map (\c -> if c == ' ' then '_' else c) (show op))
      <> parens (commas (map (expr dflags) args))
  where
    prefixOperand x@(CmmLit (CmmInt _ _)) = parens (expr dflags x)
    prefixOperand x = operandOf dflags x

-- | An operand: in parentheses unless it is an atom.
operandOf :: DynFlags -> CmmExpr -> SDoc
operandOf dflags e
  | atomic e = expr dflags e
  | otherwise = parens (expr dflags e)
  where
    atomic (CmmLit (CmmLabelOff {})) = False
    atomic (CmmLit (CmmLabelDiffOff {})) = False
    atomic (CmmLit _) = True -- a negative number is in parentheses already
    atomic x | Just _ <- loadOf x = True
    atomic x | Just _ <- relaxedReadOf x = True
    atomic (CmmReg _) = True
    atomic (CmmMachOp op args) =
      not (length args == 2 && isInfix op) && not (length args == 1 && isPrefix op)
    atomic _ = False -- CmmRegOff is printed in parentheses
    isInfix op = maybe False (const True) (infixOp op)
    isPrefix op = maybe False (const True) (prefixOp op)

infixOp :: MachOp -> Maybe String
infixOp op = case op of
  MO_Eq _ -> Just "=="
  MO_Ne _ -> Just "!="
  MO_Shl _ -> Just "<<"
  MO_U_Shr _ -> Just ">>"
  MO_U_Ge _ -> Just ">="
  MO_U_Le _ -> Just "<="
  MO_U_Gt _ -> Just ">"
  MO_U_Lt _ -> Just "<"
  MO_Add _ -> Just "+"
  MO_Sub _ -> Just "-"
  MO_U_Quot _ -> Just "/"
  MO_Mul _ -> Just "*"
  MO_U_Rem _ -> Just "%"
  MO_And _ -> Just "&"
  MO_Or _ -> Just "|"
  MO_Xor _ -> Just "^"
  _ -> Nothing

prefixOp :: MachOp -> Maybe String
prefixOp op = case op of
  MO_Not _ -> Just "~"
  MO_S_Neg _ -> Just "-"
  _ -> Nothing

-- | A literal.  A number's width follows it unless it is the word (@8 :: W32@); a
-- negative number is in parentheses with its width (@(-8 :: W32)@).
lit :: DynFlags -> CmmLit -> SDoc
lit dflags l = case l of
  CmmInt i w -> negParens (i < 0) (integer i <> width w)
  CmmFloat r w -> let d = fromRational r :: Double
                  in negParens (d < 0 || isNegativeZero d) (double d <+> dcolon <+> ppr w)
  CmmLabel c -> label dflags c
  CmmLabelOff c i -> label dflags c <> offset i
  CmmLabelDiffOff a b i _ -> label dflags a <> char '-' <> label dflags b <> offset i
  _ -> pprP dflags l -- a block's label, and what never reaches the hook
  where
    width w = if w == wordWidth (targetPlatform dflags) then empty else space <> dcolon <+> ppr w
    negParens True d = parens d
    negParens False d = d
    offset i | i == 0 = empty
             | i > 0 = char '+' <> int i
             | otherwise = char '-' <> int (negate i)

-- | A source note's name as a string strobec reads: its UTF-8 bytes, with Haskell's
-- escapes for the others than printable ASCII.
cmmString :: String -> String
cmmString s = "\"" ++ go (BS.unpack (bytesFS (mkFastString s))) ++ "\""
  where
    go [] = []
    go (b : bs)
      | c == '"' || c == '\\' = '\\' : c : go bs
      | b >= 0x20 && b < 0x7f = c : go bs
      | otherwise = '\\' : show b ++ (case bs of
                                         (n : _) | isDigit (toEnum (fromIntegral n)) -> "\\&"
                                         _ -> "") ++ go bs
      where c = toEnum (fromIntegral b) :: Char

-- ---- the labels of a declaration ------------------------------------------------------

declLabels :: GenCmmDecl RawCmmStatics CmmTopInfo CmmGraph -> [CLabel]
declLabels (CmmData _ (CmmStaticsRaw l statics)) = l : concat [litLabels x | CmmStaticLit x <- statics]
declLabels (CmmProc info l _ graph) =
  l : concat [cit_lbl t : maybe [] pure (cit_srt t) | t <- mapElems (info_tbls info)]
    ++ concatMap blockLabels (toBlockListEntryFirst graph)
  where
    blockLabels b = let (_, middle, end) = blockSplit b
                    in concatMap nodeLabels (blockToList middle) ++ nodeLabels end
    nodeLabels :: CmmNode e x -> [CLabel]
    nodeLabels n = foldExpDeep (\e ls -> case e of CmmLit x -> litLabels x ++ ls; _ -> ls) n []

litLabels :: CmmLit -> [CLabel]
litLabels l = case l of
  CmmLabel c -> [c]
  CmmLabelOff c _ -> [c]
  CmmLabelDiffOff a b _ _ -> [a, b]
  _ -> []
