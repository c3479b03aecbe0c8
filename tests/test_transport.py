"""``guitest.models.transport.read_response``: HTTP/1.x replies read from a real socket, byte by byte or whole.

Every reply is written by a peer thread into one end of a socket pair; the reader gets
the other end. Replies cut into 1-byte writes check that no read assumes a whole head
or body arrives at once.
"""

from __future__ import annotations

import socket
import threading

import pytest

from guitest.models.transport import Closed, HTTPFailure, read_response


def replied(raw: bytes, *, piecewise: bool = False, close: bool = True):
    """``read_response`` of ``raw`` sent by a peer (one byte per send when ``piecewise``); the peer closes after."""
    ours, theirs = socket.socketpair()
    ours.settimeout(5)

    def send() -> None:
        try:
            if piecewise:
                for i in range(len(raw)):
                    theirs.sendall(raw[i : i + 1])
            else:
                theirs.sendall(raw)
        finally:
            if close:
                theirs.close()

    peer = threading.Thread(target=send)
    peer.start()
    try:
        return read_response(ours)
    finally:
        peer.join()
        ours.close()
        if not close:
            theirs.close()


BODY = b'{"choices": [{"message": {"content": "Answer: [0.5, 0.5]"}}]}'
PLAIN = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(BODY), BODY)


@pytest.mark.parametrize("piecewise", [False, True], ids=["whole", "byte-by-byte"])
def test_content_length_reply(piecewise: bool) -> None:
    reply = replied(PLAIN, piecewise=piecewise)
    assert (reply.status, reply.body, reply.will_close) == (200, BODY, False)
    assert reply.headers == {"content-type": "application/json", "content-length": str(len(BODY))}


@pytest.mark.parametrize("piecewise", [False, True], ids=["whole", "byte-by-byte"])
def test_chunked_reply_with_extensions_and_trailers(piecewise: bool) -> None:
    raw = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;name=value\r\nhello\r\n1A\r\n" + b"x" * 26 + b"\r\n0\r\nX-Trailer: yes\r\n\r\n"
    reply = replied(raw, piecewise=piecewise)
    assert reply.body == b"hello" + b"x" * 26
    assert not reply.will_close


def test_interim_replies_are_skipped() -> None:
    raw = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n" + PLAIN
    reply = replied(raw)
    assert (reply.status, reply.body) == (200, BODY)
    assert "link" not in reply.headers


def test_close_delimited_body_and_http10() -> None:
    reply = replied(b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" + BODY)
    assert (reply.body, reply.will_close) == (BODY, True)
    reply = replied(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok")  # HTTP/1.0 without keep-alive closes
    assert (reply.body, reply.will_close) == (b"ok", True)
    reply = replied(b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok", close=False)
    assert (reply.body, reply.will_close) == (b"ok", False)


def test_connection_close_header_and_bodyless_statuses() -> None:
    reply = replied(b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}")
    assert (reply.status, reply.headers["retry-after"], reply.will_close) == (429, "3", True)
    reply = replied(b"HTTP/1.1 204 No Content\r\n\r\n", close=False)  # no body to wait for
    assert (reply.status, reply.body) == (204, b"")


def test_repeated_and_folded_headers() -> None:
    reply = replied(b"HTTP/1.1 200 OK\r\nX-A: one\r\nx-a: two\r\nX-Long: first\r\n  second\r\nContent-Length: 0\r\n\r\n")
    assert reply.headers["x-a"] == "one, two"
    assert reply.headers["x-long"] == "first second"


def test_bytes_after_the_reply_mark_the_connection_unusable() -> None:
    reply = replied(PLAIN + b"HTTP/1.1 200 OK\r\n")
    assert reply.body == BODY and reply.will_close


def test_nothing_at_all_is_a_closed_connection() -> None:
    with pytest.raises(Closed):
        replied(b"")


@pytest.mark.parametrize(
    "raw, message",
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", "closed in the middle of the reply (5 of 10 body bytes)"),
        (b"HTTP/1.1 200 OK\r\nContent-Le", "closed in the middle of the reply"),
        (b"SSH-2.0-OpenSSH_9.6\r\n\r\n", "not an HTTP reply"),
        (b"HTTP/1.1 OK\r\n\r\n", "not an HTTP reply"),
        (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "malformed header line"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n", "bad Content-Length"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "bad chunk size"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabXY0\r\n\r\n", "malformed chunked body"),
        (b"HTTP/1.1 200 OK\r\n" + b"X: " + b"y" * 70_000, "reply head longer than"),
    ],
    ids=["short-body", "cut-head", "not-http", "no-status-code", "header-without-colon", "bad-length", "bad-chunk-size", "bad-chunk-end", "huge-head"],
)
def test_broken_replies_are_failures_that_say_what_broke(raw: bytes, message: str) -> None:
    with pytest.raises(HTTPFailure) as caught:
        replied(raw)
    assert message in str(caught.value)
    assert not isinstance(caught.value, Closed)  # some bytes came: not a dropped idle connection to retry


def test_a_silent_peer_times_out() -> None:
    ours, theirs = socket.socketpair()
    ours.settimeout(0.2)
    try:
        with pytest.raises(TimeoutError):
            read_response(ours)
    finally:
        ours.close()
        theirs.close()


def test_a_post_sends_the_body_object_it_was_given_right_after_the_head() -> None:
    """The lean client sends the request's head, then the body as it is: a 4K screenshot's 5 MB body is not copied to
    be joined to the head (1-2 ms of CPU a case, docs/bench.md); the server reads the same bytes as before."""
    from guitest.models.transport import JSONPoster

    ours, theirs = socket.socketpair()
    ours.settimeout(5)
    sent: list[bytes] = []

    class Recording:  # the connection's socket, recording what is handed to sendall
        def __getattr__(self, name: str) -> object:
            return getattr(ours, name)

        def sendall(self, data: bytes) -> None:
            sent.append(data)
            ours.sendall(data)

    body = b'{"image": "' + b"A" * 300_000 + b'"}'
    received: list[bytes] = []

    def peer() -> None:
        data = b""
        while b"\r\n\r\n" not in data or len(data.partition(b"\r\n\r\n")[2]) < len(body):
            data += theirs.recv(1 << 16)
        received.append(data)
        theirs.sendall(PLAIN)

    thread = threading.Thread(target=peer)
    thread.start()
    poster = JSONPoster("http://127.0.0.1:9/v1", 5.0, {})
    conn = poster._connection(False)
    conn.sock = Recording()
    try:
        reply = poster.post("/chat/completions", body)
    finally:
        thread.join()
        ours.close()
        theirs.close()
    assert reply.body == BODY
    assert len(sent) == 2 and sent[1] is body
    assert received == [sent[0] + body]
    assert sent[0].startswith(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:9\r\n") and f"Content-Length: {len(body)}\r\n".encode() in sent[0]
