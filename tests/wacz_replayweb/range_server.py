"""A static file server on 127.0.0.1 that answers Range requests (ReplayWeb.page reads a
WACZ by ranges; Python's http.server alone does not). Usage: range_server.py DIR PORT"""
import http.server
import os
import re
import sys


class Handler(http.server.SimpleHTTPRequestHandler):
    def send_head(self):
        path = self.translate_path(self.path)
        wanted = self.headers.get("Range")
        if not wanted or not os.path.isfile(path):
            return super().send_head()
        m = re.match(r"bytes=(\d*)-(\d*)", wanted)
        size = os.path.getsize(path)
        if m.group(1):
            start = int(m.group(1))
            end = int(m.group(2)) if m.group(2) else size - 1
        else:
            start, end = size - int(m.group(2)), size - 1
        end = min(end, size - 1)
        f = open(path, "rb")
        f.seek(start)
        self.send_response(206)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Content-Length", str(end - start + 1))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        self.range_left = end - start + 1
        return f

    def copyfile(self, source, out):
        left = getattr(self, "range_left", None)
        if left is None:
            return super().copyfile(source, out)
        while left > 0:
            chunk = source.read(min(65536, left))
            if not chunk:
                break
            out.write(chunk)
            left -= len(chunk)

    def log_message(self, *args):
        pass


os.chdir(sys.argv[1])
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2])), Handler).serve_forever()
