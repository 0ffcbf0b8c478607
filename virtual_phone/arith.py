"""Shell arithmetic, `$((...))`: C integer expressions over shell variables, 64-bit wrapping.

Operators by precedence, as POSIX sh and mksh have them: assignment (`= += -= *= /= %=
<<= >>= &= ^= |=`), `?:`, `||`, `&&`, `|`, `^`, `&`, `== !=`, `< <= > >=`, `<< >>`,
`+ -`, `* / %`, `**`, unary `+ - ! ~`, parentheses. A variable that is unset or empty is 0.
"""

from __future__ import annotations

import re
from collections.abc import MutableMapping

from virtual_phone.errors import VirtualPhoneError

_TOKEN = re.compile(
    r"\s*(?:(0[xX][0-9a-fA-F]+|\d+)|([A-Za-z_][A-Za-z0-9_]*)"
    r"|(<<=|>>=|\*\*|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&^|]=|[-+*/%<>&^|!~?:=()]))"
)
_BINARY = [
    ("||",),
    ("&&",),
    ("|",),
    ("^",),
    ("&",),
    ("==", "!="),
    ("<", "<=", ">", ">="),
    ("<<", ">>"),
    ("+", "-"),
    ("*", "/", "%"),
]
_ASSIGN = ("=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "^=", "|=")
_MAX_DEPTH = 64


class ArithmeticFailure(VirtualPhoneError):
    """The expression cannot be evaluated; the message reads like mksh's."""


def _wrap(value: int) -> int:
    return ((value + (1 << 63)) % (1 << 64)) - (1 << 63)


def _apply(op: str, a: int, b: int) -> int:
    if op in ("/", "%") and b == 0:
        raise ArithmeticFailure("divide by zero")
    if op == "/":
        return _wrap(abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1))
    if op == "%":
        return _wrap(a - b * (abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)))
    if op == "**":
        if b < 0:
            raise ArithmeticFailure("exponent less than 0")
        return _wrap(pow(a, b, 1 << 64))
    table = {
        "+": lambda: a + b,
        "-": lambda: a - b,
        "*": lambda: a * b,
        "<<": lambda: a << (b & 63),
        ">>": lambda: a >> (b & 63),
        "<": lambda: int(a < b),
        "<=": lambda: int(a <= b),
        ">": lambda: int(a > b),
        ">=": lambda: int(a >= b),
        "==": lambda: int(a == b),
        "!=": lambda: int(a != b),
        "&": lambda: a & b,
        "^": lambda: a ^ b,
        "|": lambda: a | b,
        "&&": lambda: int(bool(a) and bool(b)),
        "||": lambda: int(bool(a) or bool(b)),
    }
    return _wrap(table[op]())


class _Evaluator:
    def __init__(self, text: str, env: MutableMapping[str, str]) -> None:
        self.env = env
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        while pos < len(text):
            match = _TOKEN.match(text, pos)
            if match is None or match.end() == pos:
                if text[pos:].strip():
                    raise ArithmeticFailure(f"unexpected '{text[pos:].strip()[:1]}'")
                break
            kind = "num" if match[1] else "name" if match[2] else "op"
            self.tokens.append((kind, match[match.lastindex or 0]))
            pos = match.end()
        self.pos = 0
        self.depth = 0

    def peek(self) -> str:
        return self.tokens[self.pos][1] if self.pos < len(self.tokens) else ""

    def take(self) -> tuple[str, str]:
        if self.pos >= len(self.tokens):
            raise ArithmeticFailure("expression expected")
        self.pos += 1
        return self.tokens[self.pos - 1]

    def value_of(self, name: str) -> int:
        text = self.env.get(name, "").strip()
        if not text:
            return 0
        match = re.fullmatch(r"(-?)(?:0[xX]([0-9a-fA-F]+)|(\d+))", text)
        if match is None:
            raise ArithmeticFailure(f"{text}: bad number")
        value = int(match[2], 16) if match[2] else int(match[3])
        return _wrap(-value if match[1] else value)

    def expression(self) -> int:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise ArithmeticFailure("expression nested too deeply")
        try:
            if (
                self.pos + 1 < len(self.tokens)
                and self.tokens[self.pos][0] == "name"
                and self.tokens[self.pos + 1][1] in _ASSIGN
            ):
                name = self.take()[1]
                op = self.take()[1]
                value = self.expression()
                if op != "=":
                    value = _apply(op[:-1], self.value_of(name), value)
                self.env[name] = str(value)
                return value
            return self.ternary()
        finally:
            self.depth -= 1

    def ternary(self) -> int:
        condition = self.binary(0)
        if self.peek() != "?":
            return condition
        self.take()
        yes = self.expression()
        if self.take()[1] != ":":
            raise ArithmeticFailure("':' expected")
        no = self.expression()
        return yes if condition else no

    def binary(self, level: int) -> int:
        if level == len(_BINARY):
            return self.power()
        left = self.binary(level + 1)
        while self.peek() in _BINARY[level]:
            op = self.take()[1]
            left = _apply(op, left, self.binary(level + 1))
        return left

    def power(self) -> int:
        base = self.unary()
        if self.peek() == "**":
            self.take()
            return _apply("**", base, self.power())
        return base

    def unary(self) -> int:
        op = self.peek()
        if op in ("+", "-", "!", "~"):
            self.take()
            self.depth += 1
            if self.depth > _MAX_DEPTH:
                raise ArithmeticFailure("expression nested too deeply")
            value = self.unary()
            self.depth -= 1
            return {"+": value, "-": _wrap(-value), "!": int(not value), "~": _wrap(~value)}[op]
        kind, text = self.take()
        if kind == "num":
            return _wrap(int(text, 16) if text[:2].lower() == "0x" else int(text))
        if kind == "name":
            return self.value_of(text)
        if text == "(":
            value = self.expression()
            if self.take()[1] != ")":
                raise ArithmeticFailure("')' expected")
            return value
        raise ArithmeticFailure(f"unexpected '{text}'")


def evaluate(text: str, env: MutableMapping[str, str]) -> int:
    """The value of ``text``; assignments in it update ``env``.

    >>> env = {"i": "4"}
    >>> evaluate("i += 2 * 3", env), env["i"]
    (10, '10')
    """
    if not text.strip():
        return 0
    evaluator = _Evaluator(text, env)
    value = evaluator.expression()
    if evaluator.pos != len(evaluator.tokens):
        raise ArithmeticFailure(f"unexpected '{evaluator.peek()}'")
    return value
