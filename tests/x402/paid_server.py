#!/usr/bin/env python3
"""A paid resource server for the tests: FastAPI behind the official x402 package's payment
middleware (protocol version 2: the offer in PAYMENT-REQUIRED, the payment read from
PAYMENT-SIGNATURE, the settlement in PAYMENT-RESPONSE), verifying and settling through the
facilitator at --facilitator with the package's HTTPFacilitatorClient.

  GET /paid  402 until paid (scheme exact, --amount atomic units of --asset to --pay-to on
             --network, extra {"name": "USDC", "version": "2"}); then {"paid": true}
  GET /free  {"free": true}, no payment

The price is an explicit asset amount: a dollar price would make the package pick its own default
asset for the network (Base's real USDC on eip155:8453).

Run with the python of scripts/x402-tools.sh. It asks the facilitator GET /supported before it
listens, so start the facilitator first. Prints one line, `listening http://127.0.0.1:PORT`, on
stdout once it accepts connections; everything else goes to stderr.
"""

import argparse
import logging
import sys
import time

# The package and uvicorn may print: stdout carries only the listening line.
STDOUT = sys.stdout
sys.stdout = sys.stderr

from serving import serve  # noqa: E402
from fastapi import FastAPI  # noqa: E402
from x402 import x402ResourceServer  # noqa: E402
from x402.http import FacilitatorConfig, HTTPFacilitatorClient, PaymentOption  # noqa: E402
from x402.http.middleware.fastapi import payment_middleware  # noqa: E402
from x402.http.types import RouteConfig  # noqa: E402
from x402.mechanisms.evm.exact import ExactEvmServerScheme  # noqa: E402
from x402.schemas import AssetAmount  # noqa: E402

# How long the facilitator may take to answer its first call.
STARTUP_SECS = 60

log = logging.getLogger("paid_server")


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--facilitator", required=True, help="the facilitator's URL")
    parser.add_argument("--network", required=True, help="eip155:<chain id>")
    parser.add_argument("--asset", required=True, help="the token's address, 0x…")
    parser.add_argument("--pay-to", required=True, help="the payee's address, 0x…")
    parser.add_argument("--amount", required=True, help="the price in the token's atomic units")
    parser.add_argument("--max-timeout-seconds", type=int, default=300)
    parser.add_argument(
        "--facilitator-timeout-ms",
        type=int,
        default=None,
        help="how long each call to the facilitator (verify, settle, supported) may take; the "
        "package's default is 90 s",
    )
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    return parser.parse_args()


def initialize(server: x402ResourceServer) -> None:
    """Asks the facilitator GET /supported now, again until it answers within STARTUP_SECS: the
    middleware would only warn and try again on the first paid request, and on a busy machine one
    call can outlast a short --facilitator-timeout-ms."""
    deadline = time.monotonic() + STARTUP_SECS
    while True:
        try:
            server.initialize()
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def app_for(args: argparse.Namespace) -> FastAPI:
    config = FacilitatorConfig(url=args.facilitator)
    if args.facilitator_timeout_ms is not None:
        # httpx's timeout for each phase of one call (connect, write, read...): for a settle, the
        # wait for the facilitator's answer.
        config.timeout = args.facilitator_timeout_ms / 1000
    server = x402ResourceServer(HTTPFacilitatorClient(config))
    server.register(args.network, ExactEvmServerScheme())
    routes = {
        "GET /paid": RouteConfig(
            accepts=PaymentOption(
                scheme="exact",
                pay_to=args.pay_to,
                price=AssetAmount(
                    amount=str(args.amount),
                    asset=args.asset,
                    extra={"name": "USDC", "version": "2"},
                ),
                network=args.network,
                max_timeout_seconds=args.max_timeout_seconds,
            ),
            description="the paid resource of the x402 tests",
            mime_type="application/json",
        )
    }
    initialize(server)
    # Made here, not on the first request: it exits when the facilitator cannot pay this route,
    # before the server says it listens.
    middleware = payment_middleware(routes, server)

    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)

    @app.middleware("http")
    async def x402(request, call_next):
        return await middleware(request, call_next)

    @app.get("/paid")
    def paid():
        return {"paid": True}

    @app.get("/free")
    def free():
        return {"free": True}

    return app


def main() -> None:
    args = arguments()
    logging.basicConfig(
        stream=sys.stderr, level=logging.INFO, format="paid_server %(levelname)s %(name)s: %(message)s"
    )
    try:
        app = app_for(args)
    except Exception as error:
        sys.exit(f"paid_server: the facilitator at {args.facilitator} could not be used: {error}")
    serve(app, args.port, STDOUT)


if __name__ == "__main__":
    main()
