#!/usr/bin/env python3
"""A stand-in for a simverbs process's control socket, used to test
simverbs-ctl's side of the protocol on its own: serves <rundir>/<pid>.ctl,
answers list/port-down/port-up and refuses unknown devices like the library,
and appends every request line it receives to a log file.

usage: fake_ctl_server.py RUNDIR LOGFILE DEV[,DEV...] [SECONDS]
"""
import os
import socket
import sys
import time

rundir, logfile, devs = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
lifetime = float(sys.argv[4]) if len(sys.argv) > 4 else 30.0
state = {d: "ACTIVE" for d in devs}
faults = {d: "none" for d in devs}

os.makedirs(rundir, exist_ok=True)
path = os.path.join(rundir, "%d.ctl" % os.getpid())
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
srv.listen(8)
srv.settimeout(0.2)
deadline = time.monotonic() + lifetime


def answer(line):
    words = line.split()
    if not words:
        return ["error: empty command"]
    verb, args = words[0], words[1:]
    if verb == "list":
        return ["%s port 1 state %s gid ::ffff:127.0.%d.1 tx_bytes 0 rx_bytes 0 "
                "tx_pkts 0 rx_pkts 0 drops 0 faults %s" % (d, state[d], i, faults[d])
                for i, d in enumerate(devs)] + ["ok"]
    if not args or args[0] not in state:
        return ["error: unknown device %s" % (args[0] if args else "")]
    dev = args[0]
    if verb == "port-down":
        state[dev] = "DOWN"
    elif verb == "port-up":
        state[dev] = "ACTIVE"
    elif verb == "fatal" and dev == devs[-1]:
        # Lets the test see a refusal that comes from the process itself.
        return ["error: device %s already fatal" % dev]
    else:
        faults[dev] = " ".join(words)
    return ["ok"]


try:
    while time.monotonic() < deadline:
        try:
            conn, _ = srv.accept()
        except socket.timeout:
            continue
        with conn:
            conn.settimeout(2)
            data = b""
            while b"\n" not in data:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                data += chunk
            line = data.split(b"\n")[0].decode()
            with open(logfile, "a") as log:
                log.write(line + "\n")
            conn.sendall(("\n".join(answer(line)) + "\n").encode())
finally:
    os.unlink(path)
