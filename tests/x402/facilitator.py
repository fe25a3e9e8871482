#!/usr/bin/env python3
"""An x402 facilitator for the tests: the official package's facilitator (x402FacilitatorSync with
its exact EVM scheme) behind the v2 HTTP facilitator protocol its HTTPFacilitatorClient speaks:
POST /verify and POST /settle take {"x402Version", "paymentPayload", "paymentRequirements"} and
answer the package's VerifyResponse / SettleResponse as camelCase JSON with status 200 (a refused
payment is isValid/success false, not an HTTP error); GET /supported answers its SupportedResponse.
The package ships the class but no server, hence this file.

It settles on the chain at --rpc with the private key in X402_FACILITATOR_KEY (the environment
only: a command line is visible to every process; the key is never printed).

Run with the python of scripts/x402-tools.sh. Prints one line, `listening http://127.0.0.1:PORT`,
on stdout once it accepts connections; everything else goes to stderr.
"""

import argparse
import asyncio
import logging
import os
import sys

# The package and uvicorn may print: stdout carries only the listening line.
STDOUT = sys.stdout
sys.stdout = sys.stderr

from serving import serve  # noqa: E402
from fastapi import FastAPI, Request  # noqa: E402
from fastapi.responses import JSONResponse  # noqa: E402
from starlette.concurrency import run_in_threadpool  # noqa: E402
from x402 import x402FacilitatorSync  # noqa: E402
from x402.mechanisms.evm import FacilitatorWeb3Signer  # noqa: E402
from x402.mechanisms.evm.exact import ExactEvmFacilitatorScheme  # noqa: E402
from x402.schemas import parse_payment_payload, parse_payment_requirements  # noqa: E402

log = logging.getLogger("facilitator")


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rpc", required=True, help="the chain's JSON-RPC URL (anvil)")
    parser.add_argument("--network", required=True, help="eip155:<chain id>, as the offers name it")
    parser.add_argument(
        "--settle-delay-ms",
        type=int,
        default=0,
        help="sleep this long before settling, so a resource server can give up waiting for a "
        "settle that still happens",
    )
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    return parser.parse_args()


def dump(model) -> dict:
    return model.model_dump(by_alias=True, exclude_none=True)


def app_for(facilitator: x402FacilitatorSync, settle_delay_s: float) -> FastAPI:
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)

    async def parsed(request: Request):
        body = await request.json()
        payload = parse_payment_payload(body["paymentPayload"])
        requirements = parse_payment_requirements(payload.x402_version, body["paymentRequirements"])
        return payload, requirements

    @app.get("/supported")
    def supported():
        return dump(facilitator.get_supported())

    @app.post("/verify")
    async def verify(request: Request):
        try:
            payload, requirements = await parsed(request)
        except Exception as error:  # a body the protocol does not allow
            return JSONResponse({"error": f"invalid request: {error}"}, status_code=400)
        try:
            # The scheme calls the chain synchronously: off the event loop.
            result = await run_in_threadpool(facilitator.verify, payload, requirements)
        except Exception as error:
            log.exception("verify failed")
            return JSONResponse({"error": str(error)}, status_code=500)
        log.info("verify: %s", dump(result))
        return dump(result)

    @app.post("/settle")
    async def settle(request: Request):
        try:
            payload, requirements = await parsed(request)
        except Exception as error:
            return JSONResponse({"error": f"invalid request: {error}"}, status_code=400)
        if settle_delay_s > 0:
            # Goes on when the caller has given up: the late settle is the point.
            log.info("settle: waiting %.3f s first", settle_delay_s)
            await asyncio.sleep(settle_delay_s)
        try:
            result = await run_in_threadpool(facilitator.settle, payload, requirements)
        except Exception as error:
            log.exception("settle failed")
            return JSONResponse({"error": str(error)}, status_code=500)
        log.info("settle: %s", dump(result))
        return dump(result)

    return app


def main() -> None:
    args = arguments()
    logging.basicConfig(
        stream=sys.stderr, level=logging.INFO, format="facilitator %(levelname)s %(name)s: %(message)s"
    )
    # Taken out of the environment, so nothing started from here inherits it.
    key = os.environ.pop("X402_FACILITATOR_KEY", "")
    if not key:
        sys.exit("facilitator: X402_FACILITATOR_KEY (the settling account's private key) is not set")
    try:
        signer = FacilitatorWeb3Signer(private_key=key, rpc_url=args.rpc)
    except Exception:
        # Not the error's text: it could quote the key.
        sys.exit("facilitator: X402_FACILITATOR_KEY is not a private key (32 bytes in hex)")
    del key
    try:
        chain_id = signer.get_chain_id()
    except Exception as error:
        sys.exit(f"facilitator: the chain at {args.rpc} does not answer: {error}")
    if args.network != f"eip155:{chain_id}":
        sys.exit(f"facilitator: {args.rpc} is chain {chain_id}, not {args.network}")
    log.info("settling from %s on %s", signer.address, args.network)

    facilitator = x402FacilitatorSync()
    # Version 2 only, on this one network: the default registration also claims the v1 names.
    facilitator.register([args.network], ExactEvmFacilitatorScheme(signer))
    serve(app_for(facilitator, args.settle_delay_ms / 1000), args.port, STDOUT)


if __name__ == "__main__":
    main()
