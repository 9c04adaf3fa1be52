#!/usr/bin/env python3
"""Generates N export-shaped JSON lines (f:c, file:size, file:mime, file:cdx) with random
SHA-1 keys, for the export/import benchmark. Deterministic for a given N (seeded)."""
import base64, hashlib, json, random, sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
rng = random.Random(42)
mimes = ["application/pdf", "text/html", "image/png", "application/octet-stream"]
out = sys.stdout
for i in range(n):
    digest = hashlib.sha1(i.to_bytes(8, "big")).digest()
    key = base64.b32encode(digest).decode()
    host = f"www{rng.randrange(1000)}.example{rng.randrange(100)}.org"
    path = f"/papers/{rng.randrange(10**6)}/paper-{i}.pdf"
    url = f"http://{host}{path}"
    surt = ",".join(reversed(host.split(".")[1:])) + ")" + path
    dt = f"20{rng.randrange(10, 24):02d}{rng.randrange(1, 13):02d}{rng.randrange(1, 29):02d}{rng.randrange(24):02d}{rng.randrange(60):02d}{rng.randrange(60):02d}"
    warc = f"CRAWL-{dt[:8]}/CRAWL-{dt}-{rng.randrange(10**5):05d}.warc.gz"
    offset = rng.randrange(10**9)
    row = {
        "key": key,
        "sha1hex": digest.hex(),
        "f:c": {"c": rng.randrange(1, 4), "d": f"{dt[:4]}-{dt[4:6]}-{dt[6:8]}T{dt[8:10]}:{dt[10:12]}:{dt[12:]}Z",
                "f": warc.split("/")[1], "o": offset, "u": url},
        "file:size": rng.randrange(1000, 10**7),
        "file:mime": rng.choice(mimes),
        "file:cdx": {"c_size": rng.randrange(500, 10**7), "dt": dt, "offset": offset, "surt": surt,
                     "url": url, "warc": warc},
    }
    out.write(json.dumps(row, separators=(",", ":"), sort_keys=False) + "\n")
