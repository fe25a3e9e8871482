"""How the harness's servers listen: on 127.0.0.1 at a port bound here (0: a free one), saying
where on the real stdout once they accept connections."""

import asyncio
import socket
from typing import TextIO

import uvicorn
from fastapi import FastAPI


def serve(app: FastAPI, port: int, stdout: TextIO) -> None:
    """Serves `app`, printing `listening http://127.0.0.1:PORT` on `stdout` once it accepts."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Bound here rather than by uvicorn, so port 0 needs no guess and no race.
    sock.bind(("127.0.0.1", port))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_config=None, lifespan="off", timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)

    async def run() -> None:
        serving = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started and not serving.done():
            await asyncio.sleep(0.01)
        if server.started:
            print(f"listening http://127.0.0.1:{port}", file=stdout, flush=True)
        await serving

    asyncio.run(run())
