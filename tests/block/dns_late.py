"""Run inside `unshare -mn` (a mount and network namespace of its own, so
the host's resolver is untouched): loopback up, /etc/resolv.conf replaced by
one naming 127.0.0.1, a DNS server there that answers each A query after
DELAY_MS with 127.0.0.2, and the command given, whose exit status is ours.
Usage: dns_late.py DIR DELAY_MS CMD..."""
import os
import socket
import struct
import subprocess
import sys
import threading
import time

d, delay, cmd = sys.argv[1], int(sys.argv[2]) / 1000, sys.argv[3:]
subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
conf = os.path.join(d, "resolv.conf")
with open(conf, "w") as f:
    f.write("nameserver 127.0.0.1\noptions timeout:2 attempts:1\n")
subprocess.run(["mount", "--bind", conf, "/etc/resolv.conf"], check=True)
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sock.bind(("127.0.0.1", 53))


def answer(query, peer):
    """The query's id and question, one A record 127.0.0.2 (A queries; an
    empty answer otherwise), sent DELAY later."""
    time.sleep(delay)
    end = 12
    while query[end]:
        end += query[end] + 1
    question = query[12:end + 5]
    qtype = struct.unpack(">H", question[-4:-2])[0]
    rr = struct.pack(">HHHIH4B", 0xC00C, 1, 1, 60, 4, 127, 0, 0, 2) if qtype == 1 else b""
    sock.sendto(query[:2] + struct.pack(">HHHHH", 0x8180, 1, 1 if rr else 0, 0, 0) + question
                + rr, peer)


def serve():
    while True:
        query, peer = sock.recvfrom(512)
        threading.Thread(target=answer, args=(query, peer), daemon=True).start()


threading.Thread(target=serve, daemon=True).start()
sys.exit(subprocess.run(cmd).returncode)
