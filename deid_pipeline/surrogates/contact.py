"""E-mail addresses, URLs and IP addresses that look valid and reach nobody.

Domains are RFC 2606's reserved ``example.com``/``.org``/``.net`` (keeping the
original's TLD when it is one of those three), IPv4 addresses come from the
RFC 5737 documentation ranges (TEST-NET-1/2/3) and IPv6 addresses from RFC
3849's ``2001:db8::/32``, so no surrogate can route to a real host.
"""

from __future__ import annotations

import ipaddress
import random
import re

from deid_pipeline.surrogates.base import SurrogateGenerator
from deid_pipeline.surrogates.keyed import (
    SurrogateContext,
    SurrogateError,
    normalise,
    seed_of,
)
from deid_pipeline.surrogates.names import NameGenerator
from deid_pipeline.surrogates.text import random_like, redraw

EXAMPLE_TLDS = ("com", "org", "net")
TEST_NETS = ("192.0.2", "198.51.100", "203.0.113")
DOC_IPV6_PREFIX = ("2001", "db8")

_EMAIL = re.compile(r"(?P<mailto>mailto:)?(?P<local>[^@\s]+)@(?P<domain>[^@\s]+?)"
                    r"(?P<dot>\.?)", re.IGNORECASE)
_LOCAL_TOKENS = re.compile(r"[^\W\d_]+|\d+|[\W_]+")
_URL = re.compile(
    r"(?P<scheme>[a-z][a-z0-9+.-]*://)?(?P<user>[^@/\s]+@)?(?P<host>[^/:?#\s]+)"
    r"(?P<port>:\d{1,5})?(?P<rest>[/?#]\S*)?", re.IGNORECASE)
_EXTENSION = re.compile(r"\.(?:html?|php|aspx?|jsp|pdf|cgi|txt|xml|json)$",
                        re.IGNORECASE)
_IPV4 = re.compile(r"(?P<ip>\d{1,3}(?:\.\d{1,3}){3})(?P<port>:\d{1,5})?")
_SPACE = re.compile(r"^(\s*)(.*?)(\s*)$", re.DOTALL)


def _rng(ctx: SurrogateContext, label: str, value: str) -> random.Random:
    return random.Random(seed_of(ctx.key, ctx.person_id, label, normalise(value)))


def example_domain(domain: str, rng: random.Random) -> str:
    """``example.<tld>``: the original TLD if reserved-capable, else a keyed pick."""
    tld = domain.rsplit(".", 1)[-1].casefold()
    out = f"example.{tld if tld in EXAMPLE_TLDS else rng.choice(EXAMPLE_TLDS)}"
    return out.upper() if domain.isupper() else out


def documentation_ipv4(rng: random.Random) -> str:
    """Draw a host address from one of the three IPv4 documentation ranges."""
    return f"{rng.choice(TEST_NETS)}.{rng.randint(1, 254)}"


class EmailGenerator(SurrogateGenerator):
    """``local@domain`` -> surrogate name parts ``@example.<tld>``.

    Words of the local part go through the person's name surrogates, so
    ``john.smith@...`` becomes ``mark.jones@example.org`` when John Smith is
    Mark Jones in the text; digits are replaced digit for digit.
    """

    labels = ("EMAIL",)
    # Whose name parts the local part takes.
    names: type[NameGenerator] = NameGenerator

    def __init__(self) -> None:
        """Share the name rules (not the instances) of the name generator."""
        super().__init__()
        self._names = self.names()

    def generate(self, value: str, label: str, ctx: SurrogateContext) -> str:
        """Return a valid-looking address at an RFC 2606 example domain."""
        lead, core, trail = _SPACE.match(value).groups()
        m = _EMAIL.fullmatch(core)
        if m is None:
            raise SurrogateError(f"{label}: not an e-mail address")
        rng = _rng(ctx, label, core)
        local = "".join(
            self._names.part(t, ctx.key, ctx.person_id) if t[0].isalpha()
            else random_like(t, rng) if t[0].isdigit() else t
            for t in _LOCAL_TOKENS.findall(m.group("local")))
        out = (f"{m.group('mailto') or ''}{local}@"
               f"{example_domain(m.group('domain'), rng)}{m.group('dot')}")
        return lead + redraw(lambda: out, core, label) + trail


class UrlGenerator(SurrogateGenerator):
    """Scheme and ``www.`` kept, host -> ``example.<tld>``, path reshuffled by shape."""

    labels = ("URL",)

    def generate(self, value: str, label: str, ctx: SurrogateContext) -> str:
        """Return a URL of the same shape on a reserved example domain."""
        lead, core, trail = _SPACE.match(value).groups()
        m = _URL.fullmatch(core)
        if m is None:
            raise SurrogateError(f"{label}: not a URL")
        rng = _rng(ctx, label, core)
        host = m.group("host")
        if _IPV4.fullmatch(host):
            new_host = documentation_ipv4(rng)
        else:
            www = host[:4] if host[:4].casefold() == "www." else ""
            new_host = www + example_domain(host, rng)
        rest = m.group("rest") or ""
        ext = _EXTENSION.search(rest)
        rest = (random_like(rest[:ext.start()], rng) + ext.group() if ext
                else random_like(rest, rng))
        user = random_like(m.group("user") or "", rng)
        out = f"{m.group('scheme') or ''}{user}{new_host}{m.group('port') or ''}{rest}"
        return lead + redraw(lambda: out, core, label) + trail


class IpAddressGenerator(SurrogateGenerator):
    """IPv4 -> TEST-NET-1/2/3 (port kept); IPv6 -> ``2001:db8::/32``."""

    labels = ("IPADDR",)

    def generate(self, value: str, label: str, ctx: SurrogateContext) -> str:
        """Return a documentation-range address of the original's family."""
        lead, core, trail = _SPACE.match(value).groups()
        rng = _rng(ctx, label, core)
        m = _IPV4.fullmatch(core)
        if m:
            out = redraw(lambda: documentation_ipv4(rng), m.group("ip"), label)
            return lead + out + (m.group("port") or "") + trail
        bare = core.strip("[]").split("%", 1)[0]
        try:
            ipaddress.IPv6Address(bare)
        except ValueError:
            raise SurrogateError(f"{label}: not an IP address") from None
        upper = any(c.isupper() for c in bare)

        def make() -> str:
            if "::" in bare:
                n = max(1, len([g for g in bare.split(":") if g]) - 2)
                text = ":".join(DOC_IPV6_PREFIX) + "::" + ":".join(
                    f"{rng.randint(1, 0xFFFF):x}" for _ in range(min(n, 5)))
            else:
                text = ":".join(DOC_IPV6_PREFIX + tuple(
                    f"{rng.randint(0, 0xFFFF):x}" for _ in range(6)))
            return text.upper() if upper else text

        out = redraw(make, bare, label)
        return lead + core.replace(bare, out, 1) + trail
