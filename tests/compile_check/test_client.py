"""helpers.compile_check.client: one server per submission, answers shared by request across a run."""

from helpers.compile_check import client


class _FakeServer:
    started = 0

    def __init__(self):
        type(self).started += 1
        self.asked = []

    def alive(self):
        return True

    def ask(self, request, timeout):
        self.asked.append(request)
        return {"ok": True, "source": request["source"]}

    def close(self):
        pass


def test_a_request_answered_for_one_submission_starts_no_server_for_the_next():
    _FakeServer.started = 0
    answers = {}
    first, second = client.Private(_FakeServer, answers), client.Private(_FakeServer, answers)
    request = {"source": "def k(x): pass", "types": ["float32[::1]"]}
    assert client.compile_request(request, state=first) == {"ok": True, "source": request["source"]}
    assert client.compile_request(dict(request), state=second) == {"ok": True, "source": request["source"]}
    assert _FakeServer.started == 1 and second.server is None


def test_a_different_request_is_compiled_and_private_caches_stay_apart():
    _FakeServer.started = 0
    shared = {}
    one, two = client.Private(_FakeServer, shared), client.Private(_FakeServer, shared)
    client.compile_request({"source": "a"}, state=one)
    client.compile_request({"source": "b"}, state=two)
    assert _FakeServer.started == 2
    alone = client.Private(_FakeServer)  # no shared answers: its own cache
    client.compile_request({"source": "a"}, state=alone)
    assert _FakeServer.started == 3 and alone.cache is not shared
