"""Pygments lexers for the stages pygments does not know: Triton's MLIR (TTIR/TTGIR) and NVIDIA SASS.

(Its LLVM lexer marks most MLIR tokens as errors, shown underlined in red; its GAS lexer does the same to SASS.)
Imported only when the IR is printed to a terminal.
"""
from pygments.lexer import RegexLexer
from pygments.token import Comment, Keyword, Name, Number, Punctuation, String, Text, Whitespace


class MlirLexer(RegexLexer):
    """TTIR/TTGIR: ops, SSA values, types, attributes; locations dimmed as comments."""

    name = "Triton MLIR"
    aliases = ["triton-mlir"]
    tokens = {"root": [
        (r"//.*?$", Comment.Single),
        (r"\bloc\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)", Comment),
        (r"#loc\d*", Comment),
        (r'"(?:[^"\\]|\\.)*"', String),
        (r"%[\w.$#-]+", Name.Variable),
        (r"@[\w.$-]+", Name.Function),
        (r"\^bb\d+", Name.Label),
        (r"#[\w.]+", Name.Attribute),
        (r"!\w+(?:\.\w+)*", Keyword.Type),
        (r"\b(?:tensor|memdesc|vector|ptr)\b", Keyword.Type),
        (r"\b(?:i1|i8|i16|i32|i64|f16|bf16|f32|f64|f8E4M3FN|f8E5M2|f8E4M3FNUZ|f8E5M2FNUZ|index)\b", Keyword.Type),
        (r"\b[a-z_]+\.[a-z_][\w.]*\b", Name.Builtin),
        (r"\b(?:module|attributes|iter_args|to|step|dense|true|false)\b", Keyword),
        (r"0x[0-9a-fA-F]+", Number.Hex),
        (r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?", Number),
        (r"\s+", Whitespace),
        (r"[=:,<>(){}\[\]*+\-x]", Punctuation),
        (r"\w+", Text),
        (r".", Text),
    ]}


class SassLexer(RegexLexer):
    """nvdisasm output: addresses and encodings dimmed, opcodes, registers, predicates, constants."""

    name = "NVIDIA SASS"
    aliases = ["sass"]
    tokens = {"root": [
        (r"//.*?$", Comment.Single),
        (r"/\*[0-9a-f]+\*/", Comment),
        (r"/\* 0x[0-9a-f]+ \*/", Comment),
        (r"^\s*\.[\w.]+", Keyword),
        (r"@!?U?P[T0-9]\b", Name.Label),
        (r"\b(?:U?R[0-9]+|U?RZ|U?P[T0-9]|SR_[\w.]+|SRZ)\b", Name.Variable),
        (r"\bc\[0x[0-9a-f]+\]", Name.Constant),
        (r"\b(?:gdesc|desc)\b", Name.Constant),
        (r"\b[A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*\b", Name.Builtin),
        (r"[\w.$]+:", Name.Label),
        (r"0x[0-9a-fA-F]+", Number.Hex),
        (r"-?\d+(?:\.\d+)?", Number),
        (r"\s+", Whitespace),
        (r"[\[\],;{}()|+\-`~!]", Punctuation),
        (r".", Text),
    ]}
