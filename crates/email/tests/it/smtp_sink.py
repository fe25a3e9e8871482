"""The SMTP server's handler in the email crate's tests (aiosmtpd -c smtp_sink.Sink DIR).

Each accepted message is written to DIR/NNNN.eml as received, and its envelope to NNNN.json.
Recipients whose local part starts with "refuse" get a permanent refusal (550), those starting
with "later" a transient one (451).
"""
import itertools
import json
import pathlib


class Sink:
    def __init__(self, directory):
        self.directory = pathlib.Path(directory)
        self.numbers = itertools.count(1)

    @classmethod
    def from_cli(cls, parser, *args):
        if len(args) != 1:
            parser.error("smtp_sink.Sink takes the directory to write messages to")
        return cls(args[0])

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        local_part = address.split("@", 1)[0]
        if local_part.startswith("refuse"):
            return "550 5.1.1 mailbox unavailable"
        if local_part.startswith("later"):
            return "451 4.3.0 try again later"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        stem = self.directory / f"{next(self.numbers):04}"
        stem.with_suffix(".eml").write_bytes(envelope.original_content)
        envelope_json = {"mail_from": envelope.mail_from, "rcpt_tos": envelope.rcpt_tos}
        stem.with_suffix(".json").write_text(json.dumps(envelope_json))
        return "250 2.0.0 accepted"
