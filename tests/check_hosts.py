#!/usr/bin/env python3
"""No network host written into the repository (issue 51): the programs and scripts take every address they
download from from the machine's own configuration (the npm registry from npm's, the Debian mirror from apt's
sources), and the documents cite by name, not by address. Greps every file git knows (tracked, and new ones not
ignored) for a URL with a host (a scheme, "://", then a host name or address) and exits 1 with file:line: URL for
each.

    python3 tests/check_hosts.py [REPOSITORY]

Not read: COPYING (the GPL's own text, which names the FSF's addresses) and binary files (a NUL byte, or not UTF-8).
A URL with no host (file:///path) is no address. Allowed, the short explicit list below:
- placeholders that are no host anyone reaches: localhost, 127.0.0.1, [::1]; the names RFC 2606 reserves for
  documentation, example.com, example.org, example.net and their subdomains; any name under .invalid (RFC 6761:
  never resolves), as the tests use (https://r.example.invalid);
- identifiers written as URLs that nothing downloads, each required by its format, exactly as written:
  the XML namespace on an SVG file's <svg> line and the Format field of Debian's machine-readable copyright file
  (packaging/copyright; lintian requires its exact value): allowed by where they stand, not spelled here.
Exit 77 (skipped) when REPOSITORY is not a git checkout (a source tarball): then there is no list of its files."""
import pathlib
import re
import subprocess
import sys

repo = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
NOT_READ = {"COPYING"}
PLACEHOLDER_HOSTS = {"localhost", "127.0.0.1", "[::1]"}
DOCUMENTATION_DOMAINS = ("example.com", "example.org", "example.net", "invalid")  # the name or a subdomain of it
# Where a format requires an identifier written as a URL: (file name, the line's start); nothing downloads these,
# and no host is spelled here.
IDENTIFIER_PLACES = (
    (re.compile(r"\.svg$"), re.compile(r'\s*<svg xmlns="')),  # SVG's XML namespace
    (re.compile(r"^packaging/copyright$"), re.compile(r"Format: ")),  # DEP-5's Format field (lintian checks it)
)
# A scheme, "://" and the authority: up to the path, a quote, whitespace or a bracket.
URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://([^/\s\"'`<>(){}\\|^]*)[^\s\"'`<>(){}\\|^]*")


def host_of(authority):
    """The host of a URL's authority ('' when none or not a name): user information and port removed."""
    host = authority.rsplit("@", 1)[-1].lower()
    if host.startswith("["):  # an IPv6 address
        host = host[: host.find("]") + 1]
    else:
        host = host.split(":", 1)[0].rstrip(".,;")
    return host if re.fullmatch(r"[a-z0-9.-]*[a-z0-9][a-z0-9.-]*|\[[0-9a-f:.]+\]", host) else ""


def allowed(name, line, host):
    if host in PLACEHOLDER_HOSTS:
        return True
    if any(file.search(name) and start.match(line) for file, start in IDENTIFIER_PLACES):
        return True
    return any(host == domain or host.endswith("." + domain) for domain in DOCUMENTATION_DOMAINS)


def files():
    listed = subprocess.run(
        ["git", "-c", f"safe.directory={repo}", "-C", str(repo), "ls-files", "-z", "--cached", "--others",
         "--exclude-standard"],
        capture_output=True, check=True).stdout.decode()
    return sorted({name for name in listed.split("\0") if name})


def main():
    if not (repo / ".git").exists():
        print(f"{repo} is not a git checkout: no list of its files, skipped")
        return 77
    found = []
    for name in files():
        path = repo / name
        if name in NOT_READ or not path.is_file() or path.is_symlink():
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.split("\n"), 1):
            for match in URL.finditer(line):
                host = host_of(match.group(1))
                if host and not allowed(name, line, host):
                    found.append(f"{name}:{number}: {match.group(0)}")
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} network address(es) written into the repository: take them from the machine's "
              "configuration, or cite by name (tests/check_hosts.py lists what is allowed)")
        return 1
    print(f"no network host in {len(files())} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
