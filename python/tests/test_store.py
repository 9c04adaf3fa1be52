"""The Python module against the CLI on the same store: rows as `sediment get` and
`sediment export` print them, captures as `sediment captures --output json` lists them,
errors with the CLI's messages."""

import base64
import datetime
import hashlib
import time

import pytest

SITE = "http://127.0.0.1:47213"


def regrouped(line):
    """A row of `get`/`export` (`{"key":…,"sha1hex":…,"family:qualifier":value}`) as
    `{family: {qualifier: value}}`."""
    row = {}
    for name, value in line.items():
        if ":" in name:
            family, qualifier = name.split(":", 1)
            row.setdefault(family, {})[qualifier] = value
    return row


def raw(key):
    return base64.b32decode(key)


@pytest.fixture(scope="session")
def exported(crawl_store):
    rows = crawl_store.json_lines("export")
    assert len(rows) > 20, "the fixture crawls hold dozens of payloads"
    return rows


@pytest.fixture(scope="session")
def store(sediment, crawl_store):
    return sediment.Store(crawl_store.store)


def test_a_row_is_what_get_prints_in_every_key_spelling(store, crawl_store, exported):
    for line in exported[:5]:
        key = line["key"]
        want = regrouped(crawl_store.json_lines("get", key)[0])
        assert want == regrouped(line)
        for spelling in (key, key.lower(), line["sha1hex"], "sha1:" + key, raw(key), key.encode()):
            assert store.row(spelling) == want, spelling
    # Every row of the store, and the values keep their JSON types (numbers, objects).
    for line in exported:
        assert store.row(line["key"]) == regrouped(line)
    sizes = [store.row(line["key"])["file"]["size"] for line in exported]
    assert all(isinstance(size, int) for size in sizes), sizes


def test_a_missing_row_is_none_and_a_bad_key_the_cli_error(sediment, store, crawl_store):
    absent = hashlib.sha1(b"not in the fixture crawls").digest()
    assert store.row(absent) is None
    crawl_store.error("get", absent.hex())
    for bad in ("ABC", "1I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ", "zz39a3ee5e6b4b0d3255bfef95601890afd80709", ""):
        with pytest.raises(sediment.SedimentError) as raised:
            store.row(bad)
        assert str(raised.value) == crawl_store.error("get", bad)
    with pytest.raises(TypeError):
        store.row(12)


def test_scan_by_prefix_is_export_in_key_order(store, exported):
    everything = [(raw(line["key"]), regrouped(line)) for line in exported]
    assert list(store.scan()) == everything
    assert list(store.scan(b"")) == everything
    keys = [key for key, _ in everything]
    for prefix in (keys[0][:1], keys[-1][:1], keys[3][:2], keys[5], b"\xff\xff\xff", b"\x00"):
        want = [(k, row) for k, row in everything if k.startswith(prefix)]
        assert list(store.scan(prefix)) == want, prefix
    assert list(store.scan(limit=3)) == everything[:3]
    assert list(store.scan(keys[0][:1], limit=1)) == everything[:1]
    assert list(store.scan(limit=0)) == []


def cli_captures(crawl_store, url, *options):
    lines = crawl_store.ok("captures", "--url", url, "--output", "json", *options)
    table = __import__("json").loads(lines)
    if not table:
        return []
    names, rows = table[0], table[1:]
    return [dict(zip(names, row)) for row in rows]


def test_captures_are_the_cli_listing(store, crawl_store):
    home = SITE + "/"
    every = cli_captures(crawl_store, SITE + "/*")
    assert len(every) == 117, "every capture of the site in both crawls"
    stamps = sorted({c["timestamp"] for c in every})
    middle = stamps[len(stamps) // 2]
    queries = [
        ((home,), {}, []),
        ((SITE + "/*",), {}, []),
        ((home, "prefix"), {}, ["--match", "prefix"]),
        ((SITE + "/docs/", "host"), {}, ["--match", "host"]),
        (("gnu.org", "domain"), {}, ["--match", "domain"]),
        (("*.gnu.org",), {}, []),
        ((SITE + "/docs/*",), {"from_ts": middle}, ["--from", middle]),
        ((SITE + "/docs/*",), {"to": middle[:10]}, ["--to", middle[:10]]),
        ((SITE + "/*",), {"from_ts": stamps[0][:4], "to": middle}, ["--from", stamps[0][:4], "--to", middle]),
        ((SITE + "/*",), {"limit": 5}, ["--limit", "5"]),
        ((SITE + "/*",), {"limit": -4}, ["--limit", "-4"]),
        ((SITE + "/*",), {"reverse": True, "limit": 7}, ["--reverse", "--limit", "7"]),
        ((SITE + "/*",), {"filter": ["!status:200"]}, ["--filter", "!status:200"]),
        ((SITE + "/*",), {"filter": ["status:200", "~url:docs"]}, ["--filter", "status:200", "--filter", "~url:docs"]),
        ((SITE + "/*",), {"collapse": ["digest"]}, ["--collapse", "digest"]),
        ((SITE + "/*",), {"closest": middle, "limit": 3}, ["--closest", middle, "--limit", "3"]),
        (("nothing.example",), {}, []),
    ]
    for args, kwargs, options in queries:
        url = args[0]
        match = ["--match", args[1]] if len(args) > 1 and "--match" not in options else []
        want = cli_captures(crawl_store, url, *match, *options)
        got = list(store.captures(*args, **kwargs))
        assert got == want, (args, kwargs)
    assert len(list(store.captures(SITE + "/*"))) == 117
    first = next(iter(store.captures(home)))
    assert set(first) >= {"urlkey", "timestamp", "original", "mimetype", "statuscode", "digest", "length", "offset", "filename"}
    # One filter, collapse or field list may be a plain string.
    assert list(store.captures(SITE + "/*", filter="!status:200", collapse="digest")) == cli_captures(
        crawl_store, SITE + "/*", "--filter", "!status:200", "--collapse", "digest"
    )
    assert list(store.captures(home, fields="timestamp")) == [
        {"timestamp": c["timestamp"]} for c in cli_captures(crawl_store, home)
    ]
    narrow = list(store.captures(home, fields=["timestamp", "statuscode"]))
    assert narrow == [{"timestamp": c["timestamp"], "statuscode": c["statuscode"]} for c in cli_captures(crawl_store, home)]


def test_a_bad_query_or_store_is_the_cli_error(sediment, store, crawl_store, tmp_path):
    for kwargs, options in [
        ({"match_type": "nearby"}, ["--match", "nearby"]),
        ({"from_ts": "20x"}, ["--from", "20x"]),
        ({"limit": 0}, ["--limit", "0"]),
        ({"filter": ["nofield:x"]}, ["--filter", "nofield:x"]),
    ]:
        with pytest.raises(sediment.SedimentError) as raised:
            store.captures("x.org", **kwargs)
        assert str(raised.value) == crawl_store.error("captures", "--url", "x.org", *options)
    with pytest.raises(sediment.SedimentError) as raised:
        store.captures(SITE + "/*", match_type="exact")
    assert "wildcard" in str(raised.value)
    nowhere = tmp_path / "no-store"
    nowhere.mkdir()
    with pytest.raises(sediment.SedimentError) as raised:
        sediment.open(nowhere)
    cli = type(crawl_store)(crawl_store.binary, nowhere)
    assert str(raised.value) == cli.error("get", "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ")


def test_an_iterator_closed_early_stops_and_stays_ended(store):
    captures = store.captures(SITE + "/*")
    assert next(captures)["original"].startswith(SITE)
    captures.close()
    assert list(captures) == []
    rows = store.scan()
    next(rows)
    rows.close()
    assert list(rows) == []
    # Many iterators dropped half-way leave no thread behind that would keep the store.
    for _ in range(200):
        next(iter(store.captures(SITE + "/*")))
        next(iter(store.scan()))


def test_iterators_stream_a_large_store(sediment, binary, tmp_path):
    """200,000 captures: the first comes long before the listing could have been read
    whole, and a listing dropped after one item does not read the rest."""
    from conftest import Cli

    n = 200_000
    cdx = tmp_path / "many.cdx"
    with open(cdx, "w") as out:
        out.write(" CDX N b a m s k r M S V g\n")
        start = datetime.datetime(2020, 1, 1)
        for i in range(n):
            digest = base64.b32encode(hashlib.sha1(i.to_bytes(8, "big")).digest()).decode()
            ts = (start + datetime.timedelta(seconds=i)).strftime("%Y%m%d%H%M%S")
            out.write(
                f"com,example)/p{i:07d} {ts} http://example.com/p{i:07d} "
                f"text/html 200 {digest} - - 1000 {i * 1000} many.warc.gz\n"
            )
    cli = Cli(binary, tmp_path / "store")
    cli.ok("backfill-cdx", str(cdx))
    store = sediment.open(tmp_path / "store")

    started = time.perf_counter()
    whole = sum(1 for _ in store.captures("example.com/*"))
    whole_time = time.perf_counter() - started
    assert whole == n

    started = time.perf_counter()
    for _ in range(5):
        first = next(iter(store.captures("example.com/*")))
    first_time = (time.perf_counter() - started) / 5
    assert first["original"] == "http://example.com/p0000000"
    assert first_time < whole_time / 20, (first_time, whole_time)
