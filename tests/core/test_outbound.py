"""The SSRF guard's rules (``console.outbound``): which URLs are called and which addresses
may be reached, under each policy."""

from __future__ import annotations

import pytest

from console import outbound as o

REFUSED = [
    "10.0.0.1", "172.16.5.4", "192.168.1.1", "127.0.0.1", "127.8.9.10", "0.0.0.0",
    "169.254.169.254", "100.64.0.1", "224.0.0.1", "255.255.255.255", "240.0.0.1",
    "::1", "::", "fe80::1", "fc00::1", "fd12:3456::1", "ff02::1", "::ffff:127.0.0.1",
    "::ffff:10.0.0.1", "::ffff:169.254.169.254", "2002:7f00:1::1", "2001::1", "192.0.2.1",
    "198.18.0.1", "not-an-ip", "", "1.1.1.1%eth0x",
]  # fmt: skip
PUBLIC = ["1.1.1.1", "8.8.8.8", "93.184.216.34", "2606:4700:4700::1111", "::ffff:8.8.8.8"]
LOOPBACK = o.Policy(allow_loopback=True)
PRIVATE = o.Policy(allow_private=True)


@pytest.mark.parametrize("address", REFUSED)
def test_private_and_special_addresses_are_refused(address):
    with pytest.raises(o.Refused):
        o.check_addresses([address])


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_are_allowed(address):
    assert o.check_addresses([address])


def test_one_bad_address_among_good_ones_refuses_the_host():
    with pytest.raises(o.Refused):
        o.check_addresses(["8.8.8.8", "10.0.0.1"])
    with pytest.raises(o.Refused):
        o.check_addresses([])


def test_allowing_loopback_lets_loopback_through_and_nothing_else():
    assert o.check_addresses(["127.0.0.1", "::1", "::ffff:127.0.0.1"], LOOPBACK)
    for address in ("10.0.0.1", "169.254.169.254", "0.0.0.0", "192.168.0.1"):
        with pytest.raises(o.Refused):
            o.check_addresses([address], LOOPBACK)


def test_allowing_private_networks_never_lets_metadata_or_loopback_through():
    assert o.check_addresses(["10.0.0.1", "172.16.5.4", "192.168.1.1", "fd12::1"], PRIVATE)
    for address in ("169.254.169.254", "127.0.0.1", "::1", "0.0.0.0", "100.64.0.1", "fe80::1"):
        with pytest.raises(o.Refused):
            o.check_addresses([address], PRIVATE)


@pytest.mark.parametrize(
    "url",
    ["ftp://a.example/x", "file:///etc/passwd", "gopher://a.example/", "https://u:p@a.example/",
     "https://u@a.example/", "http:///x", "https://a.example:99999/", "https://a.example:x/",
     None, 1, "", "x" * 9000],
)  # fmt: skip
def test_only_plain_http_urls_are_called(url):
    with pytest.raises(o.Refused):
        o.url_target(url)


def test_a_target_names_host_and_port():
    assert o.url_target("https://img.example/a.png") == o.Target("https", "img.example", 443)
    assert o.url_target("HTTP://img.example:8080/a") == o.Target("http", "img.example", 8080)


def test_a_literal_check_refuses_what_needs_no_lookup():
    assert o.literal_refused("https://api.example/v1") is None
    assert o.literal_refused("http://10.0.0.5/x") is not None
    assert o.literal_refused("http://[::1]:8000/mcp") is not None
    assert o.literal_refused("http://localhost:8000/mcp") is not None
    assert o.literal_refused("http://127.0.0.1:8000/mcp", LOOPBACK) is None
    assert o.literal_refused("http://10.0.0.5/x", PRIVATE) is None
    assert o.literal_refused("ftp://a.example/") is not None
