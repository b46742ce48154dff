#!/usr/bin/env python3
"""load.py URL [SECONDS] [CONNECTIONS]: GET URL repeatedly over keep-alive connections for
SECONDS (default 20) with CONNECTIONS clients (default 4); prints requests/s and latency
percentiles. Standard library only."""
import http.client, sys, threading, time, urllib.parse

def main():
    url = urllib.parse.urlsplit(sys.argv[1])
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 20
    conns = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    path = url.path + ("?" + url.query if url.query else "")
    latencies, errors, sizes = [], [0], [0]
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client():
        c = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
        mine = []
        while time.monotonic() < stop:
            t0 = time.monotonic()
            c.request("GET", path, headers={"Host": f"127.0.0.1:{url.port}"})
            r = c.getresponse()
            body = r.read()
            dt = time.monotonic() - t0
            if r.status != 200:
                with lock:
                    errors[0] += 1
            mine.append(dt)
            sizes[0] = len(body)
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client) for _ in range(conns)]
    t0 = time.monotonic()
    for t in threads: t.start()
    for t in threads: t.join()
    wall = time.monotonic() - t0
    latencies.sort()
    pct = lambda p: latencies[min(len(latencies) - 1, int(p / 100 * len(latencies)))] * 1000
    print(f"{len(latencies)} requests in {wall:.1f} s with {conns} connections: "
          f"{len(latencies) / wall:.1f} req/s, {errors[0]} errors, body {sizes[0]} bytes")
    print(f"latency ms: p50 {pct(50):.1f}  p90 {pct(90):.1f}  p99 {pct(99):.1f}  max {latencies[-1] * 1000:.1f}")

if __name__ == "__main__":
    main()
