#!/usr/bin/env python3
"""A naive SRE baseline: names the service with the most firing alerts as the root cause (ties:
the first by name), or nothing when no alert names a service. It shows what alert counting
alone scores, false positives included. Standard library only."""

import collections
import http.client
import json
import os
import socket


class Tools(http.client.HTTPConnection):
    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(os.environ["BENCHYARD_TOOLS_SOCKET"])


connection = Tools("tools")
connection.request("POST", "/call", json.dumps({"name": "list_alerts", "arguments": {}}))
alerts = json.loads(json.loads(connection.getresponse().read())["result"])["alerts"]
counts = collections.Counter(a["labels"]["service"] for a in alerts if "service" in a["labels"])
namespaces = {
    a["labels"]["service"]: a["labels"].get("namespace") for a in alerts if "service" in a["labels"]
}
if counts:
    top = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[0][0]
    found = [{"kind": "Service", "name": top, "namespace": namespaces[top]}]
else:
    found = []
print(
    json.dumps(
        {"root_causes": found, "confidence": 0.3, "explanation": "the most alerting service"}
    )
)
