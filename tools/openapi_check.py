#!/usr/bin/python3
"""Checks `vigil serve` against its contract, docs/openapi.yaml (ctest `openapi_check`).

    /usr/bin/python3 tools/openapi_check.py --vigil build/vigil --spec docs/openapi.yaml \
        --model testdata/models/serve_model.json --policy policies/default.yaml \
        --fx-rates data/fx_rates.csv

1. The spec itself: OpenAPI 3.1, every component and inline schema a valid JSON Schema 2020-12,
   every $ref resolvable, every operation with responses, every error response an Error, every
   example valid against its schema, and a table of hand-written bodies (conforming and broken)
   that the schemas must accept or refuse, so a loosened schema is caught too.
2. `vigil serve --routes` lists exactly the spec's operations.
3. A real server (`vigil model add` first, then `vigil serve --listen 127.0.0.1:0` on a fresh
   data directory, with drift monitoring over a small reference profile written here, freeze
   off so that no decision depends on it; plain HTTP with `--plaintext`, and bearer tokens of
   each role made by `vigil token create`, the admin's sent unless a check says otherwise; and
   `--record-kek`, the public half of an RSA 3072 key-encryption key made here with openssl,
   so that the audit log seals personal fields): every request below is sent with
   http.client, and every answer's status, headers, content type and body are checked against
   what the spec says for that route and status (a sequential media type such as
   application/x-ndjson line by line, against its `x-itemSchema`, OpenAPI 3.2's itemSchema);
   then SIGTERM, and the server must exit 0.
4. A second server for the cases and the workbench (CasesLive): its log in the clear (cases read
   the accounts), two analysts, a supervisor, the cases policy (--cases-policy) and a one-entry
   watchlist; payments scored into cases, then every /v1/cases route and /ui file, their states,
   four eyes, screening review, reports and refusals, checked the same way.

Every mismatch is collected (one failure does not stop the others); exit 1 with the list, or 0
with a one-line summary. --spec-only runs step 1 alone (no binary needed).

Needs only Debian's python3-yaml and python3-jsonschema (4.10: RefResolver over the spec), and
the openssl command (the key-encryption key; `vigil audit open` reads it back).
"""

import argparse
import hashlib
import http.client
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import jsonschema
import yaml
from jsonschema import Draft202012Validator

HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
REQUIRED_SCHEMAS = ("Transaction", "Party", "Money", "Decision", "Reason", "BatchResponse",
                    "BatchItemError", "Error", "PolicyIngestResponse", "ActivateRequest",
                    "ActivateResponse", "Health", "Ready")
LISTENING_RE = re.compile(r"^vigil serve: listening on 127\.0\.0\.1:([0-9]+)$")
TRACEPARENT_RE = re.compile(r"^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$")
STARTUP_TIMEOUT_S = 30
REQUEST_TIMEOUT_S = 20
SHUTDOWN_TIMEOUT_S = 30
MAX_ERRORS_PER_BODY = 8
# The feature schema `vigil serve` computes: a drift profile must name it (a server built with
# another schema refuses the profile at start, and this check says so).
FEATURE_SCHEMA_VERSION = "vigil.features.v3"



def read_testdata(relative):
    """A file of the repository's testdata/ (the script lives in tools/)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "testdata", relative), encoding="utf-8") as f:
        return f.read()

class Failures:
    """Every mismatch found, in order."""

    def __init__(self):
        self.items = []

    def add(self, where, message):
        self.items.append(f"{where}: {message}")

    def expect(self, condition, where, message):
        if not condition:
            self.add(where, message)
        return bool(condition)


def snippet(data, limit=300):
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else str(data)
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def parse_media_type(value):
    """'application/json; charset=UTF-8' -> ('application/json', {'charset': 'utf-8'})."""
    parts = [p.strip() for p in value.split(";")]
    params = {}
    for p in parts[1:]:
        if "=" in p:
            k, v = p.split("=", 1)
            params[k.strip().lower()] = v.strip().strip('"').lower()
    return parts[0].lower(), params


def strict_json(text):
    """json.loads that refuses duplicate members and NaN/Infinity (not JSON, RFC 8259)."""

    def pairs(items):
        out = {}
        for k, v in items:
            if k in out:
                raise ValueError(f"member {k!r} given twice")
            out[k] = v
        return out

    def constant(name):
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, object_pairs_hook=pairs, parse_constant=constant)


# ---------------------------------------------------------------------------------------------
# The spec


class Spec:
    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            self.doc = yaml.safe_load(f)
        self.path = path
        # '#/components/schemas/X' resolves against the whole document (no $id anywhere).
        self.resolver = jsonschema.RefResolver(base_uri="", referrer=self.doc)

    def pointer(self, ref):
        if not ref.startswith("#/"):
            raise KeyError(f"only local $refs are supported: {ref}")
        node = self.doc
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            node = node[part]
        return node

    def deref(self, node):
        seen = set()
        while isinstance(node, dict) and "$ref" in node and len(node) == 1:
            ref = node["$ref"]
            if ref in seen:
                raise KeyError(f"$ref cycle at {ref}")
            seen.add(ref)
            node = self.pointer(ref)
        return node

    def operations(self):
        """{(METHOD, path): operation}"""
        ops = {}
        for path, item in (self.doc.get("paths") or {}).items():
            for method, op in item.items():
                if method in HTTP_METHODS:
                    ops[(method.upper(), path)] = op
        return ops

    def methods_of(self, path):
        return {m for (m, p) in self.operations() if p == path}

    def response_for(self, method, path, status):
        op = self.operations().get((method, path))
        if op is None:
            return None
        responses = op.get("responses") or {}
        for key in (str(status), f"{str(status)[0]}XX", "default"):
            if key in responses:
                return self.deref(responses[key])
        return None

    def component_response(self, name):
        node = ((self.doc.get("components") or {}).get("responses") or {}).get(name)
        return self.deref(node) if node is not None else None

    def request_schema(self, method, path, media_type):
        op = self.operations()[(method, path)]
        body = self.deref(op["requestBody"])
        return body["content"][media_type]["schema"]

    def errors(self, schema, instance):
        """Every way "instance" fails "schema", as 'path: message' strings."""
        validator = Draft202012Validator(
            schema, resolver=self.resolver, format_checker=jsonschema.draft202012_format_checker)
        try:
            found = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
        except (jsonschema.RefResolutionError, KeyError, TypeError, re.error) as e:
            # A broken spec (reported by step 1) must not hide the other checks.
            return [f"cannot validate, the schema is broken: {type(e).__name__}: {e}"]
        return [describe(e) for e in found]


def describe(error, limit=300):
    """One line per validation error. For oneOf/anyOf, the closest alternative's own error
    (not a dump of the whole instance)."""
    if error.validator in ("oneOf", "anyOf") and error.context:
        closest = jsonschema.exceptions.best_match(error.context)
        return (f"{error.json_path}: matches none of the {error.validator} alternatives; "
                f"closest: {describe(closest, limit)}")
    message = error.message
    if len(message) > limit:
        message = message[:limit] + "..."
    return f"{error.json_path}: {message}"


# ---------------------------------------------------------------------------------------------
# Step 1: the spec itself


def iter_refs(node, where="#"):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str):
                yield where, v
            else:
                yield from iter_refs(v, f"{where}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from iter_refs(v, f"{where}/{i}")


SCHEMA_MAP_KEYWORDS = ("properties", "patternProperties", "$defs", "dependentSchemas")
SCHEMA_KEYWORDS = ("items", "additionalProperties", "not", "if", "then", "else", "contains",
                   "propertyNames", "unevaluatedProperties", "unevaluatedItems")
SCHEMA_LIST_KEYWORDS = ("allOf", "anyOf", "oneOf", "prefixItems")


def iter_subschemas(schema, where):
    """The schema and every schema nested in it, with a readable location."""
    if not isinstance(schema, dict):
        return
    yield where, schema
    for k in SCHEMA_MAP_KEYWORDS:
        for name, sub in (schema.get(k) or {}).items():
            yield from iter_subschemas(sub, f"{where}/{k}/{name}")
    for k in SCHEMA_KEYWORDS:
        if isinstance(schema.get(k), dict):
            yield from iter_subschemas(schema[k], f"{where}/{k}")
    for k in SCHEMA_LIST_KEYWORDS:
        for i, sub in enumerate(schema.get(k) or []):
            yield from iter_subschemas(sub, f"{where}/{k}/{i}")


def inline_schemas(spec):
    """(location, schema) for every schema outside components/schemas."""
    doc = spec.doc
    comps = doc.get("components") or {}
    for name, p in (comps.get("parameters") or {}).items():
        if "schema" in p:
            yield f"#/components/parameters/{name}/schema", p["schema"]
    for name, h in (comps.get("headers") or {}).items():
        if "schema" in h:
            yield f"#/components/headers/{name}/schema", h["schema"]
    for name, r in (comps.get("responses") or {}).items():
        for mt, media in (r.get("content") or {}).items():
            if "schema" in media:
                yield f"#/components/responses/{name}/content/{mt}/schema", media["schema"]
    for (method, path), op in spec.operations().items():
        where = f"{method} {path}"
        for p in op.get("parameters") or []:
            p = spec.deref(p)
            if "schema" in p:
                yield f"{where} parameter {p.get('name')}", p["schema"]
        body = spec.deref(op.get("requestBody") or {})
        for mt, media in (body.get("content") or {}).items():
            if "schema" in media:
                yield f"{where} request {mt}", media["schema"]
        for status, resp in (op.get("responses") or {}).items():
            resp = spec.deref(resp)
            for mt, media in (resp.get("content") or {}).items():
                if "schema" in media:
                    yield f"{where} {status} {mt}", media["schema"]
                if "x-itemSchema" in media:
                    yield f"{where} {status} {mt} x-itemSchema", media["x-itemSchema"]
            for hname, h in (resp.get("headers") or {}).items():
                h = spec.deref(h)
                if "schema" in h:
                    yield f"{where} {status} header {hname}", h["schema"]


def media_examples(spec, media, where):
    """(location, value) of a media type object's example and examples."""
    if "example" in media:
        yield f"{where} example", media["example"]
    for name, ex in (media.get("examples") or {}).items():
        ex = spec.deref(ex)
        if "value" in ex:
            yield f"{where} examples/{name}", ex["value"]


def check_spec(spec, fails):
    """Step 1. Returns the number of examples validated."""
    doc = spec.doc
    where = spec.path
    if not isinstance(doc, dict):
        fails.add(where, "not a YAML mapping")
        return 0
    fails.expect(str(doc.get("openapi", "")).startswith("3.1."), where,
                 f"openapi must be 3.1.x (JSON Schema 2020-12), got {doc.get('openapi')!r}")
    info = doc.get("info") or {}
    fails.expect(info.get("title") and info.get("version"), where, "info.title and info.version")

    for at, ref in iter_refs(doc):
        try:
            spec.pointer(ref)
        except (KeyError, IndexError, TypeError) as e:
            fails.add(where, f"{at}: $ref {ref} does not resolve ({e})")

    schemas = (doc.get("components") or {}).get("schemas") or {}
    for name in REQUIRED_SCHEMAS:
        fails.expect(name in schemas, where, f"components/schemas/{name} is missing")
    for name, schema in schemas.items():
        try:
            Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as e:
            fails.add(where, f"components/schemas/{name}: not a JSON Schema 2020-12: {e.message}")
    for at, schema in inline_schemas(spec):
        try:
            Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as e:
            fails.add(where, f"{at}: not a JSON Schema 2020-12: {e.message}")

    operation_ids = set()
    ops = spec.operations()
    fails.expect(ops, where, "no operations under paths")
    for (method, path), op in ops.items():
        at = f"{method} {path}"
        oid = op.get("operationId")
        if oid:
            fails.expect(oid not in operation_ids, where, f"{at}: operationId {oid} used twice")
            operation_ids.add(oid)
        responses = op.get("responses") or {}
        if not fails.expect(responses, where, f"{at}: no responses"):
            continue
        for status, resp in responses.items():
            fails.expect(re.fullmatch(r"[1-5](XX|[0-9]{2})|default", str(status)), where,
                         f"{at}: response key {status!r} is not a status code")
            try:
                resp = spec.deref(resp)
            except KeyError:
                continue  # reported with the $refs
            fails.expect(resp.get("description"), where, f"{at} {status}: no description")
            if str(status)[0] in "45":
                check_error_response(spec, resp, f"{at} {status}", fails)
    for name, resp in ((doc.get("components") or {}).get("responses") or {}).items():
        check_error_response(spec, resp, f"components/responses/{name}", fails)

    return check_examples(spec, fails)


def check_error_response(spec, resp, at, fails):
    """A 4xx/5xx answer is application/json whose schema is, or is allOf with, the Error; or a
    oneOf that offers the Error among its alternatives (a route whose 500 is either a report
    of what it found, like GET /v1/audit/verify's damaged log, or an Error)."""
    content = resp.get("content") or {}
    if not fails.expect(list(content) == ["application/json"], spec.path,
                        f"{at}: an error answer is application/json only, got {list(content)}"):
        return
    schema = content["application/json"].get("schema") or {}
    error_ref = {"$ref": "#/components/schemas/Error"}
    def is_error(s):
        return s == error_ref or error_ref in (s.get("allOf") or [])

    fails.expect(is_error(schema) or any(is_error(s) for s in schema.get("oneOf") or []),
                 spec.path,
                 f"{at}: the schema must be the Error schema (or allOf or oneOf with it)")


def check_examples(spec, fails):
    """Every example in the spec validates against its schema."""
    count = 0
    doc = spec.doc

    def validate(at, schema, value):
        nonlocal count
        count += 1
        for err in spec.errors(schema, value):
            fails.add(spec.path, f"{at} does not match its schema: {err}")

    for name, schema in ((doc.get("components") or {}).get("schemas") or {}).items():
        for at, sub in iter_subschemas(schema, f"#/components/schemas/{name}"):
            for i, value in enumerate(sub.get("examples") or []):
                validate(f"{at} examples[{i}]", sub, value)
    for name, p in ((doc.get("components") or {}).get("parameters") or {}).items():
        if "example" in p and "schema" in p:
            validate(f"#/components/parameters/{name} example", p["schema"], p["example"])
    for name, h in ((doc.get("components") or {}).get("headers") or {}).items():
        if "example" in h and "schema" in h:
            validate(f"#/components/headers/{name} example", h["schema"], h["example"])
    for name, r in ((doc.get("components") or {}).get("responses") or {}).items():
        for mt, media in (r.get("content") or {}).items():
            for at, value in media_examples(spec, media, f"#/components/responses/{name} {mt}"):
                validate(at, media.get("schema", {}), value)
    for (method, path), op in spec.operations().items():
        body = spec.deref(op.get("requestBody") or {})
        for mt, media in (body.get("content") or {}).items():
            for at, value in media_examples(spec, media, f"{method} {path} request {mt}"):
                validate(at, media.get("schema", {}), value)
        for status, resp in (op.get("responses") or {}).items():
            if "$ref" in resp:
                continue  # a component response: checked above
            for mt, media in (resp.get("content") or {}).items():
                for at, value in media_examples(spec, media, f"{method} {path} {status} {mt}"):
                    validate(at, media.get("schema", {}), value)
                    if "x-itemSchema" in media and isinstance(value, str):
                        for n, line in enumerate(value.splitlines(), 1):
                            try:
                                item = strict_json(line)
                            except ValueError as e:
                                fails.add(spec.path, f"{at} line {n} is not JSON: {e}")
                                continue
                            validate(f"{at} line {n}", media["x-itemSchema"], item)
    return count


# Bodies the schemas must accept (True) or refuse (False). They pin the contract's details: if
# someone loosens a schema (drops additionalProperties: false, a required member, a pattern),
# this table fails even when the server still conforms.


def self_test_cases():
    decision = {
        "transaction_id": "tx-1",
        "trace_id": "0192f0c4-3a1b-7c2d-9e4f-5a6b7c8d9e0f",
        "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-b7ad6b7169203331-01",
        "action": "REVIEW",
        "score": 0.812346,
        "reasons": [
            {"kind": "rule", "code": "structuring.below_threshold", "text": "3 payments",
             "shadow": False},
            {"kind": "model", "code": "score", "text": "model score 0.8123 >= 0.15"},
            {"kind": "model", "code": "orig_out_count_24h", "text": "14 (+0.41)",
             "contribution": 0.41},
            {"kind": "screening", "code": "OFAC-123", "text": "name match"},
        ],
        "policy_version": "default-2026.11.1@6d225c5d4c12",
        "model_version": "model.json@f3994ecba0e9",
        "model_role": "champion",
        "feature_schema_version": "vigil.features.v1",
        "degraded": False,
        "latency_us": {"parse": 3, "features": 10, "total": 40},
    }

    def d(**changes):
        out = json.loads(json.dumps(decision))
        for k, v in changes.items():
            if v is KeyError:
                out.pop(k, None)
            else:
                out[k] = v
        return out

    def with_reason(reason):
        return d(reasons=[reason])

    error = {"error": {"code": "invalid_amount", "field": "$.amount.value", "message": "bad"}}
    tx = {
        "id": "pay-1", "timestamp": "2022-09-01T08:15:30.250Z",
        "originator": {"account_id": "GB29NWBK60161331926819", "country": "GB"},
        "beneficiary": {"account_id": "DE89370400440532013000"},
        "amount": {"value": "9850.00", "currency": "USD"},
    }

    def t(**changes):
        out = json.loads(json.dumps(tx))
        out.update(changes)
        return out

    ref = "ab" * 32
    slot = {"ref": ref, "model_version": "m.json@abababababab"}
    S = "#/components/schemas/"
    R = "#/components/responses/"

    # Audit export lines (GET /v1/audit/export, `vigil audit export`).
    sealed = {"sealed": "AQm0zeVsiK0td+r7uCgcorTQcsCzXs2XKRTOEZXpqHXwEoFKHBMOVnDygPe2"}
    record = {
        "sequence": 0, "leaf_hash": "ab" * 32, "previous_leaf_hash": "00" * 32,
        "received": "2026-12-01T00:22:10.803560Z", "decided": "2026-12-01T00:22:10.805175Z",
        "actor": "token:5d703968149e2265", "source": "serve", "input_format": "json",
        "input_sha256": "cd" * 32,
        "transaction": {"id": "tx-1", "timestamp": "2022-09-01T08:15:30.250000Z",
                        "originator": {"account_id": "GB29NWBK60161331926819",
                                       "name": "Acme Trading Ltd", "country": "GB"},
                        "beneficiary": {"account_id": "DE89370400440532013000"},
                        "amount": {"value": "9850.00", "currency": "USD"},
                        "payment_format": "wire", "remittance": "Invoice 1", "priority": "P1"},
        "features": {"amount_reporting": 9850.0, "orig_amount_zscore": None},
        "decision": d(transaction_id="tx-1"),
        "fired_rules": [], "screening_hits": [],
    }

    def rec(**changes):
        out = json.loads(json.dumps(record))
        for k, v in changes.items():
            if v is KeyError:
                out.pop(k, None)
            else:
                out[k] = v
        return out

    def sealed_tx(**changes):
        out = json.loads(json.dumps(record["transaction"]))
        out["originator"] = {"account_id": sealed, "name": sealed, "country": "GB",
                             "address": sealed}
        out["beneficiary"] = {"account_id": sealed}
        out["remittance"] = sealed
        out.update(changes)
        return out

    data_key = {"id": "64111914a7e89fa7", "kek_id": "f5be593cee4266d9", "suite": "aes-256-gcm",
                "wrap": "rsa-oaep-sha256", "wrapped": "W4Thl4ZuMNZNyzuf"}
    L = S + "AuditExportLine"
    EXPORT = "#/paths/~1v1~1audit~1export/get/responses/"
    JSON_SCHEMA = "/content/application~1json/schema"
    verify = {"intact": True, "records": 3, "records_checked": 3, "tree_heads_checked": 1,
              "key_id": "ab" * 32, "trusted_key": False, "seconds": 0.001}
    return [
        # Audit export lines
        (L, record, True, "a record in the clear"),
        (L, rec(transaction=sealed_tx(), data_key_id="64111914a7e89fa7"), True,
         "a sealed record with its data key id"),
        (L, rec(actor=""), True, "no actor (no authentication)"),
        (L, rec(actor="tls:CN=ops client,O=Example Bank"), True, "a certificate subject"),
        (L, rec(actor="tls:CN=ops client,O=Example Bank token:5d703968149e2265"), True,
         "a certificate and a token"),
        (L, rec(features=[1.0, None, 3]), True, "features as an array (another schema)"),
        (L, {"data_key": data_key}, True, "a data key line"),
        (L, {"data_key": dict(data_key, suite="sm4-ctr-hmac-sm3", wrap="sm2")}, True,
         "an SM data key"),
        (L, rec(transaction=sealed_tx()), False, "sealed fields without data_key_id"),
        (L, rec(transaction=sealed_tx(), data_key_id="64111914A7E89FA7"), False,
         "upper-case data_key_id"),
        (L, rec(transaction=sealed_tx(remittance={"sealed": "not base64!"}),
                data_key_id="64111914a7e89fa7"), False, "sealed bytes not base64"),
        (L, rec(transaction=sealed_tx(remittance={"sealed": "AAAA", "key": "x"}),
                data_key_id="64111914a7e89fa7"), False, "unknown member in a sealed field"),
        (L, rec(transaction=sealed_tx(channel=sealed), data_key_id="64111914a7e89fa7"), False,
         "a field that is never sealed shown sealed"),
        (L, rec(actor="5d703968149e2265"), False, "a bare token id as actor"),
        (L, rec(actor="token:5d703968149e2265 tls:CN=x"), False, "token before certificate"),
        (L, rec(decided="2026-12-01T00:22:10Z"), False, "decided without microseconds"),
        (L, rec(leaf_hash="AB" * 32), False, "upper-case leaf hash"),
        (L, rec(source="batch"), False, "unknown source"),
        (L, rec(decision=KeyError), False, "record without its decision"),
        (L, rec(decision=d(trace_id="x")), False, "a decision the API would not answer"),
        (L, rec(extra=1), False, "unknown member in a record"),
        (L, dict(record, data_key=data_key), False, "a record and a data key in one line"),
        (L, {"data_key": dict(data_key, extra=1)}, False, "unknown member in a data key"),
        (L, {"data_key": {k: v for k, v in data_key.items() if k != "wrapped"}}, False,
         "data key without its wrapped bytes"),
        (L, {"data_key": dict(data_key, wrap="rsa-pkcs1")}, False, "unknown wrap"),
        (L, {"data_key": dict(data_key, id="64111914a7e89")}, False, "short data key id"),
        (EXPORT + "400" + JSON_SCHEMA,
         {"error": {"code": "invalid_field", "field": "limit", "message": "m"}}, True,
         "400 naming limit"),
        (EXPORT + "400" + JSON_SCHEMA,
         {"error": {"code": "invalid_field", "field": "$.limit", "message": "m"}}, False,
         "400 naming a JSON path instead of the parameter"),
        (EXPORT + "404" + JSON_SCHEMA,
         {"error": {"code": "not_found", "field": "transaction_id", "message": "m"}}, True,
         "404 for an unknown transaction"),
        (EXPORT + "404" + JSON_SCHEMA,
         {"error": {"code": "model_not_found", "field": "transaction_id", "message": "m"}},
         False, "404 with another code"),
        (S + "AuditVerifyReport", dict(verify, sealed_records=3, data_keys=1), True,
         "a sealed log's report"),
        (S + "AuditVerifyReport", dict(verify, sealed_records=3), False,
         "sealed_records without data_keys"),
        (S + "AuditVerifyReport",
         dict(verify, intact=False, damage={"kind": "missing_key", "sequence": 4,
                                            "detail": "record 4 is sealed under ..."}), True,
         "a record sealed under a data key the log lacks"),
        # Decision
        (S + "Decision", decision, True, "a full decision"),
        (S + "Decision", d(score=None, model_version="", model_role="none", reasons=[]), True,
         "rules only: null score, empty model_version"),
        (S + "Decision", d(degraded=True, degraded_reason="model late", score=None), True,
         "degraded with its reason"),
        (S + "Decision", d(shadow={"model_version": "s.json@0123456789ab", "score": None}), True,
         "a shadow that did not answer"),
        (S + "Decision", d(extra=1), False, "unknown member (additionalProperties: false)"),
        (S + "Decision", d(traceparent=KeyError), False, "traceparent is required"),
        (S + "Decision", d(model_role=KeyError), False, "model_role is required"),
        (S + "Decision", d(latency_us=KeyError), False, "latency_us is required"),
        (S + "Decision", d(score=KeyError), False, "score is required (null, not absent)"),
        (S + "Decision", d(degraded=True), False, "degraded without degraded_reason"),
        (S + "Decision", d(degraded_reason="x"), False, "degraded_reason while not degraded"),
        (S + "Decision", d(score=1.5), False, "score above 1"),
        (S + "Decision", d(score="0.5"), False, "score as a string"),
        (S + "Decision", d(action="allow"), False, "action in lower case"),
        (S + "Decision", d(model_role="shadow"), False, "model_role shadow"),
        (S + "Decision", d(trace_id="0192F0C4-3A1B-7C2D-9E4F-5A6B7C8D9E0F"), False,
         "upper-case trace_id"),
        (S + "Decision", d(trace_id="0192f0c43a1b7c2d9e4f5a6b7c8d9e0f"), False,
         "trace_id without dashes"),
        (S + "Decision", d(traceparent="00-4bf92f3577b34da6a3ce929d0e0e4736-b7ad6b7169203331"),
         False, "traceparent without flags"),
        (S + "Decision", d(traceparent="00-" + "0" * 32 + "-b7ad6b7169203331-01"), False,
         "all-zero trace-id"),
        (S + "Decision", d(latency_us={"total": 1.5}), False, "fractional latency"),
        (S + "Decision", d(latency_us={"total": -1}), False, "negative latency"),
        (S + "Decision", d(policy_version="default"), False, "policy_version without @sha"),
        (S + "Decision", d(shadow={"model_version": "s@0123456789ab", "score": 0.1, "x": 1}),
         False, "unknown member in shadow"),
        (S + "Decision", d(shadow={"score": 0.1}), False, "shadow without model_version"),
        (S + "Decision", with_reason({"kind": "rule", "code": "r", "text": "t"}), False,
         "rule reason without shadow"),
        (S + "Decision", with_reason({"kind": "model", "code": "score", "text": "t",
                                      "contribution": 0.1}), False,
         "score reason with a contribution"),
        (S + "Decision", with_reason({"kind": "model", "code": "f", "text": "t"}), False,
         "model reason without contribution"),
        (S + "Decision", with_reason({"kind": "model", "code": "f", "text": "t",
                                      "contribution": 0.1, "shadow": False}), False,
         "model reason with shadow"),
        (S + "Decision", with_reason({"kind": "watchlist", "code": "f", "text": "t"}), False,
         "unknown reason kind"),
        # Errors
        (S + "Error", error, True, "an error"),
        (S + "Error", {"error": dict(error["error"], details=["f:1:2: m"])}, True,
         "an error with details"),
        (S + "Error", {"error": {"code": "x", "message": "m"}}, False, "error without field"),
        (S + "Error", {"error": {"code": "x", "field": "", "message": "m", "hint": "h"}}, False,
         "unknown member in error"),
        (S + "Error", dict(error, status=400), False, "unknown member beside error"),
        (S + "Error", {"error": dict(error["error"], details="f:1:2: m")}, False,
         "details not a list"),
        (S + "Error", {"code": "x", "field": "", "message": "m"}, False, "error not wrapped"),
        (R + "NotFound/content/application~1json/schema",
         {"error": {"code": "missing", "field": "", "message": "m"}}, False,
         "404 with a code other than not_found"),
        (R + "MethodNotAllowed/content/application~1json/schema",
         {"error": {"code": "method_not_allowed", "field": "", "message": "m"}}, True,
         "405 body"),
        (R + "PolicyInvalid/content/application~1json/schema",
         {"error": {"code": "policy_invalid", "field": "", "message": "m"}}, False,
         "policy_invalid without details"),
        (R + "PolicyInvalid/content/application~1json/schema",
         {"error": {"code": "policy_invalid", "field": "", "message": "m",
                    "details": ["no position here"]}}, False,
         "policy_invalid detail without file:line:column"),
        (R + "ServiceUnavailable/content/application~1json/schema",
         {"error": {"code": "busy", "field": "", "message": "m"}}, False, "503 unknown code"),
        # Batch
        (S + "BatchResponse", {"results": [decision, {"index": 1, "status": 400,
                                                      "error": error["error"]}]}, True,
         "a decision and an item error"),
        (S + "BatchResponse", {"results": [{"index": 0, "status": 500,
                                            "error": error["error"]}]}, False,
         "item error with status 500"),
        (S + "BatchResponse", {"results": [{"index": 0, "status": 422, "error": error["error"]}]},
         False, "422 item whose code is not features_refused"),
        (S + "BatchResponse", {"results": [{"index": -1, "status": 400,
                                            "error": error["error"]}]}, False, "negative index"),
        (S + "BatchResponse", {"results": [decision], "count": 1}, False,
         "unknown member in the batch answer"),
        (S + "BatchResponse", [decision], False, "a bare array"),
        # Administration
        (S + "PolicyIngestResponse", {"id": 1, "version": "v", "sha256": "ab" * 32,
                                      "tag": "v@abababababab", "active": True}, True, "ingested"),
        (S + "PolicyIngestResponse", {"id": 1, "version": "v", "sha256": "ab" * 6,
                                      "tag": "v@abababababab", "active": True}, False,
         "short sha256"),
        (S + "ActivateResponse", {"champion": slot, "challenger": None, "shadow": slot}, True,
         "champion and shadow"),
        (S + "ActivateResponse", {"champion": None, "challenger": None, "shadow": None}, True,
         "rules only"),
        (S + "ActivateResponse", {"champion": slot, "challenger": dict(slot, traffic_weight=1),
                                  "shadow": None}, False, "challenger with all the traffic"),
        (S + "ActivateResponse", {"champion": slot, "challenger": None}, False,
         "shadow slot missing"),
        (S + "ActivateResponse", {"champion": dict(slot, ref=ref[:12]), "challenger": None,
                                  "shadow": None}, False, "abbreviated ref in the answer"),
        (S + "ActivateRequest", {"model_ref": ref[:8], "shadow": True}, True, "8-digit prefix"),
        (S + "ActivateRequest", {"model_ref": ref[:7]}, False, "7-digit prefix"),
        (S + "ActivateRequest", {"model_ref": ref, "traffic_weight": 1.5}, False, "weight 1.5"),
        (S + "Health", {"status": "ok"}, True, "healthy"),
        (S + "Ready", {"status": "ready", "policy_version": "p@0123456789ab",
                       "model_version": "", "model": "none"}, True, "ready without a model"),
        (S + "Ready", {"status": "ready", "policy_version": "p@0123456789ab",
                       "model_version": ""}, False, "ready without saying the model"),
        (S + "Ready", {"status": "ok", "policy_version": "p@0123456789ab",
                       "model_version": "", "model": "none"}, False, "ready status 'ok'"),
        # Transactions (docs/ingest.md)
        (S + "Transaction", tx, True, "required members only"),
        (S + "Transaction", t(amount={"value": 1234.56, "currency": "USD"}), True,
         "numeric amount"),
        (S + "Transaction", t(settled_amount=None, label=None, channel=None), True,
         "null means absent for optional members"),
        (S + "Transaction", t(timestamp="2022-09-01T05:30:00.123456+05:30"), True,
         "offset and microseconds"),
        (S + "Transaction", t(label={"is_laundering": False}), True, "label without typology"),
        (S + "Transaction", t(remitance="x"), False, "unknown member"),
        (S + "Transaction", t(id=None), False, "null for a required member"),
        (S + "Transaction", t(id=""), False, "empty id"),
        (S + "Transaction", t(id="a\tb"), False, "control character in id"),
        (S + "Transaction", t(id="x" * 257), False, "id over 256"),
        (S + "Transaction", t(timestamp="2022-09-01T08:15:30.1234567Z"), False,
         "7 fractional digits"),
        (S + "Transaction", t(timestamp="2022-09-01"), False, "date only"),
        (S + "Transaction", t(amount={"value": "12,50", "currency": "USD"}), False,
         "comma as decimal mark"),
        (S + "Transaction", t(amount={"value": "-5", "currency": "USD"}), False, "negative"),
        (S + "Transaction", t(amount={"value": -5, "currency": "USD"}), False,
         "negative number"),
        (S + "Transaction", t(amount={"value": "1e3", "currency": "USD"}), False, "exponent"),
        (S + "Transaction", t(amount={"value": "1.", "currency": "USD"}), False, "bare mark"),
        (S + "Transaction", t(amount={"value": "1.0123456789", "currency": "USD"}), False,
         "10 decimals"),
        (S + "Transaction", t(amount={"value": "1", "currency": "usd"}), False,
         "lower-case currency"),
        (S + "Transaction", t(amount={"value": "1", "currency": "USD", "fx": 1}), False,
         "unknown member in money"),
        (S + "Transaction", t(amount={"value": "1"}), False, "money without currency"),
        (S + "Transaction", t(originator={"account_id": "a", "country": "gb"}), False,
         "lower-case country"),
        (S + "Transaction", t(originator={"account_id": ""}), False, "empty account"),
        (S + "Transaction", t(originator={"name": "x"}), False, "party without account"),
        (S + "Transaction", t(payment_format="Credit Card"), False, "AMLworld spelling"),
        (S + "Transaction", t(priority="P3"), False, "priority P3"),
        (S + "Transaction", t(label={"typology": "x"}), False, "label without is_laundering"),
        (S + "Transaction", t(label={"is_laundering": 1}), False, "is_laundering as 1"),
    ]


def run_self_test(spec, fails):
    cases = self_test_cases()
    for ref, instance, ok, why in cases:
        try:
            errors = spec.errors({"$ref": ref}, instance)
        except jsonschema.RefResolutionError as e:
            fails.add("self-test", f"{ref}: does not resolve: {e}")
            continue
        if ok and errors:
            fails.add("self-test", f"{ref} refuses a valid body ({why}): {errors[0]}")
        elif not ok and not errors:
            fails.add("self-test", f"{ref} accepts a body it must refuse ({why})")
    return len(cases)


# ---------------------------------------------------------------------------------------------
# Step 2: routes


def check_routes(spec, vigil, fails):
    where = "vigil serve --routes"
    try:
        p = subprocess.run([vigil, "serve", "--routes"], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        fails.add(where, f"could not run: {e}")
        return 0
    if p.returncode != 0:
        fails.add(where, f"exit status {p.returncode}, expected 0; stderr: {snippet(p.stderr)}")
        return 0
    served = set()
    for n, line in enumerate(p.stdout.decode("utf-8", "replace").splitlines(), 1):
        if not line.strip():
            continue
        m = re.fullmatch(r"([A-Z]+) (/\S*)", line.strip())
        if not m:
            fails.add(where, f"line {n} is not 'METHOD PATH': {line!r}")
            continue
        served.add((m.group(1), m.group(2)))
    specified = set(spec.operations())
    for method, path in sorted(specified - served):
        fails.add(where, f"{method} {path} is in the spec but not served")
    for method, path in sorted(served - specified):
        fails.add(where, f"{method} {path} is served but not in the spec")
    return len(served)


# ---------------------------------------------------------------------------------------------
# Step 3: a live server


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers  # http.client.HTTPMessage: case-insensitive get()
        self.body = body


class Live:
    def __init__(self, args, spec, fails):
        self.args = args
        self.spec = spec
        self.fails = fails
        self.tmp = tempfile.mkdtemp(prefix="vigil-openapi-check-")
        self.data_dir = os.path.join(self.tmp, "data")
        self.tokens = {}  # role -> bearer token (vigil token create)
        os.makedirs(self.data_dir)
        self.proc = None
        self.port = None
        self.stdout_lines = []
        self.stdout_queue = queue.Queue()
        self.stdout_thread = None
        self.stderr_path = os.path.join(self.tmp, "serve.stderr")
        self.profile_path = os.path.join(self.tmp, "reference_profile.json")
        # The key-encryption key: the server gets the public half (--record-kek), the check
        # keeps the private half to open an exported page offline (vigil audit open).
        self.kek_path = os.path.join(self.tmp, "kek.pem")
        self.kek_public_path = os.path.join(self.tmp, "kek.pub.pem")
        self.kek_id = None  # 16 hex digits: SHA-256 of the public key's DER, as vigil names it
        self.stderr_file = None
        self.requests = 0
        self.model_ref = None
        self.decisions = {}  # transaction id -> Decision, fresh ones only
        self.first = None  # the first decision: its versions are the server's
        self.policy_id = None

    # -- process ---------------------------------------------------------------------------

    def model_add(self):
        where = "vigil model add"
        cmd = [self.args.vigil, "model", "add", "--data-dir", self.data_dir, self.args.model]
        try:
            p = subprocess.run(cmd, capture_output=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as e:
            self.fails.add(where, f"could not run: {e}")
            return
        if p.returncode != 0:
            self.fails.add(where, f"exit status {p.returncode}; stderr: {snippet(p.stderr)}")
            return
        lines = p.stdout.decode("utf-8", "replace").splitlines()
        m = re.fullmatch(r"([0-9a-f]{64})  (.+)", lines[0]) if len(lines) == 1 else None
        if not m:
            self.fails.add(where, f"expected one line '<64-hex sha256>  <path>', got {lines!r}")
            return
        with open(self.args.model, "rb") as f:
            sha = hashlib.sha256(f.read()).hexdigest()
        self.fails.expect(m.group(1) == sha, where,
                          f"ref {m.group(1)} is not the SHA-256 of the file ({sha})")
        self.fails.expect(os.path.exists(m.group(2)), where,
                          f"the stored path {m.group(2)} does not exist")
        self.model_ref = m.group(1)

    def write_profile(self):
        """A reference profile (tools/train.py's form) of two features and the score."""
        def entry(lo, hi):
            return {"count": 1000, "missing": 0,
                    "bin_edges": [lo + (hi - lo) * i / 10 for i in range(11)],
                    "bin_counts": [100] * 10, "mean": (lo + hi) / 2, "std": (hi - lo) / 3.5,
                    "sample": [lo + (hi - lo) * i / 20 for i in range(21)]}
        profile = {"feature_schema_version": FEATURE_SCHEMA_VERSION, "rows": 1000,
                   "features": {"amount_reporting": entry(0, 50000),
                                "is_cross_currency": entry(0, 1)},
                   "score": entry(0, 1)}
        with open(self.profile_path, "w", encoding="utf-8") as f:
            json.dump(profile, f)

    def create_token(self, role):
        where = f"vigil token create --role {role}"
        cmd = [self.args.vigil, "token", "create", "--data-dir", self.data_dir, "--role", role,
               "--description", "openapi_check"]
        try:
            p = subprocess.run(cmd, capture_output=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as e:
            self.fails.add(where, f"could not run: {e}")
            return None
        token = p.stdout.decode("utf-8", "replace").strip()
        if p.returncode != 0 or not re.fullmatch(r"vgl_[0-9a-f]{16}_[A-Za-z0-9_-]{43}", token):
            self.fails.add(where, f"exit status {p.returncode}, expected one token line; got "
                           f"{snippet(p.stdout)} {snippet(p.stderr)}")
            return None
        return token

    def make_kek(self):
        """An RSA 3072 key-encryption key (docs/security.md): private half mode 0600, public
        half by `openssl pkey -pubout`. Returns whether both were made."""
        def openssl(*cmd):
            where = f"openssl {cmd[0]} (the key-encryption key)"
            try:
                p = subprocess.run(["openssl", *cmd], capture_output=True, timeout=120)
            except (OSError, subprocess.TimeoutExpired) as e:
                self.fails.add(where, f"could not run: {e}")
                return None
            if p.returncode != 0:
                self.fails.add(where, f"exit status {p.returncode}; stderr: {snippet(p.stderr)}")
                return None
            return p.stdout

        if openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:3072",
                   "-out", self.kek_path) is None:
            return False
        os.chmod(self.kek_path, 0o600)  # vigil audit open refuses a private key others may read
        if openssl("pkey", "-in", self.kek_path, "-pubout", "-out", self.kek_public_path) is None:
            return False
        der = openssl("pkey", "-pubin", "-in", self.kek_public_path, "-outform", "DER")
        if der is None:
            return False
        self.kek_id = hashlib.sha256(der).hexdigest()[:16]
        return True

    def start(self):
        self.write_profile()
        self.tokens = {role: self.create_token(role)
                       for role in ("admin", "scorer", "policy-admin", "auditor")}
        if not self.make_kek():
            return False
        cmd = [self.args.vigil, "serve", "--listen", "127.0.0.1:0", "--data-dir", self.data_dir,
               "--model", self.args.model, "--policy", self.args.policy,
               "--fx-rates", self.args.fx_rates, "--drift-profile", self.profile_path,
               "--no-drift-freeze", "--drift-min-rows", "1",
               "--drift-short-window", "60/60", "--record-kek", self.kek_public_path,
               "--plaintext"]
        return self._launch(cmd)

    def _launch(self, cmd):
        where = "vigil serve"
        self.stderr_file = open(self.stderr_path, "wb")
        try:
            self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self.stderr_file,
                                         stdin=subprocess.DEVNULL)
        except OSError as e:
            self.fails.add(where, f"could not start: {e}")
            return False
        self.stdout_thread = threading.Thread(target=self._read_stdout, daemon=True)
        self.stdout_thread.start()
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        first = True
        while True:
            try:
                line = self.stdout_queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self.fails.add(where, f"no 'vigil serve: listening on 127.0.0.1:PORT' line on "
                               f"stdout within {STARTUP_TIMEOUT_S} s")
                return False
            if line is None:
                self.proc.wait()
                self.fails.add(where, f"exited with status {self.proc.returncode} before "
                               f"listening (its stderr is below)")
                return False
            m = LISTENING_RE.match(line)
            if first and not m:
                self.fails.add(where, f"the first stdout line must be 'vigil serve: listening on "
                               f"127.0.0.1:PORT', got {line!r}")
            first = False
            if m:
                self.port = int(m.group(1))
                if not self.fails.expect(0 < self.port < 65536, where,
                                         f"port {self.port} out of range"):
                    return False
                return True

    def _read_stdout(self):
        for raw in self.proc.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            self.stdout_lines.append(line)
            self.stdout_queue.put(line)
        self.stdout_queue.put(None)

    def stop(self):
        """SIGTERM; the server must exit 0 and have printed exactly one line."""
        if self.proc is None:
            return
        where = "vigil serve shutdown"
        if self.proc.poll() is not None:
            self.fails.add(where, f"the server had already exited with status "
                           f"{self.proc.returncode}")
        else:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=SHUTDOWN_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.fails.add(where, f"still running {SHUTDOWN_TIMEOUT_S} s after SIGTERM; killed")
                self.proc.kill()
                self.proc.wait()
                return
            self.fails.expect(self.proc.returncode == 0, where,
                              f"exit status {self.proc.returncode} after SIGTERM, expected 0")
        if self.stdout_thread:
            self.stdout_thread.join(timeout=5)
        self.fails.expect(len(self.stdout_lines) == 1, where,
                          f"stdout must hold exactly the one 'listening' line, got "
                          f"{self.stdout_lines[:5]!r}")

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stderr_tail(self, lines=30):
        try:
            with open(self.stderr_path, "rb") as f:
                text = f.read().decode("utf-8", "replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def cleanup(self):
        if self.stderr_file is not None:
            self.stderr_file.close()
        if self.args.keep:
            print(f"openapi_check: kept {self.tmp}", file=sys.stderr)
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)

    # -- HTTP --------------------------------------------------------------------------------

    def send(self, label, method, path, body=None, headers=None, token="admin"):
        """token: the role whose bearer token is sent (None: no Authorization header)."""
        if self.proc is not None and self.proc.poll() is not None:
            self.fails.add(label, f"not sent: the server exited with status "
                           f"{self.proc.returncode}")
            return None
        if isinstance(body, str):
            body = body.encode("utf-8")
        headers = dict(headers or {})
        if token is not None and self.tokens.get(token) and "Authorization" not in headers:
            headers["Authorization"] = f"Bearer {self.tokens[token]}"
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=REQUEST_TIMEOUT_S)
        try:
            conn.request(method, path, body=body, headers=headers)
            r = conn.getresponse()
            resp = Response(r.status, r.headers, r.read())
        except (OSError, http.client.HTTPException) as e:
            self.fails.add(label, f"{method} {path}: no answer ({type(e).__name__}: {e})")
            return None
        finally:
            conn.close()
        self.requests += 1
        if self.args.verbose:
            print(f"openapi_check: {label}: {resp.status} {resp.headers.get('Content-Type')} "
                  f"{snippet(resp.body, 160)}", file=sys.stderr)
        return resp

    def check(self, label, resp, expect, method, path, component=None):
        """Status, headers, content type and body against the spec; returns the parsed body."""
        if resp is None:
            return None
        f = self.fails
        f.expect(resp.status == expect, label,
                 f"status {resp.status}, expected {expect}; body: {snippet(resp.body)}")
        if component is not None and resp.status == expect:
            robj = self.spec.component_response(component)
            source = f"components/responses/{component}"
            if robj is None:
                f.add(label, f"the spec has no {source}")
                return None
        else:
            robj = self.spec.response_for(method, path, resp.status)
            source = f"{method} {path} {resp.status}"
            if robj is None:
                f.add(label, f"status {resp.status} is not in the spec for {method} {path}")
                if resp.status >= 400:  # still an error body?
                    robj = {"content": {"application/json": {
                        "schema": {"$ref": "#/components/schemas/Error"}}}}
                else:
                    return None
        self._check_headers(label, resp, robj, source)
        return self._check_body(label, resp, robj, source)

    def _check_headers(self, label, resp, robj, source):
        for name, h in (robj.get("headers") or {}).items():
            h = self.spec.deref(h)
            value = resp.headers.get(name)
            if value is None:
                self.fails.expect(not h.get("required"), label,
                                  f"header {name} missing (required by {source})")
                continue
            schema = h.get("schema") or {}
            target = self.spec.deref(schema)
            instance = value
            if target.get("type") == "integer":
                if not re.fullmatch(r"[0-9]+", value.strip()):
                    self.fails.add(label, f"header {name}: {value!r} is not an integer")
                    continue
                instance = int(value)
            for err in self.spec.errors(schema, instance):
                self.fails.add(label, f"header {name} {value!r}: {err}")
        if resp.status == 503:
            # Retry-After is always sent with overloaded (the contract's retry semantics).
            try:
                code = strict_json(resp.body.decode("utf-8"))["error"]["code"]
            except (ValueError, KeyError, TypeError, UnicodeDecodeError):
                code = None
            if code == "overloaded":
                self.fails.expect(re.fullmatch(r"[0-9]+", resp.headers.get("Retry-After", "")),
                                  label, "503 overloaded without an integer Retry-After header")

    def _check_body(self, label, resp, robj, source):
        content = robj.get("content") or {}
        if not content:
            return None
        ctype = resp.headers.get("Content-Type")
        if not ctype:
            self.fails.add(label, f"no Content-Type; {source} says {list(content)}")
            return None
        rtype, rparams = parse_media_type(ctype)
        media = None
        for key, m in content.items():
            ktype, kparams = parse_media_type(key)
            if ktype == rtype and all(rparams.get(k) == v for k, v in kparams.items()):
                media = m
                break
        if media is None:
            self.fails.add(label, f"Content-Type {ctype!r} is not what {source} gives: "
                           f"{list(content)}")
            return None
        if rparams.get("charset", "utf-8") != "utf-8":
            self.fails.add(label, f"Content-Type {ctype!r}: the charset must be utf-8")
        try:
            text = resp.body.decode("utf-8")
        except UnicodeDecodeError as e:
            self.fails.add(label, f"body is not UTF-8: {e}")
            return None
        instance = text
        if rtype == "application/json" or rtype.endswith("+json"):
            try:
                instance = strict_json(text)
            except ValueError as e:
                self.fails.add(label, f"body is not valid JSON ({e}): {snippet(text)}")
                return None
        if "x-itemSchema" in media:
            self._check_lines(label, text, media["x-itemSchema"], source)
        schema = media.get("schema")
        if schema is not None:
            errors = self.spec.errors(schema, instance)
            for err in errors[:MAX_ERRORS_PER_BODY]:
                self.fails.add(label, f"body does not match {source}: {err}")
            if len(errors) > MAX_ERRORS_PER_BODY:
                self.fails.add(label, f"... and {len(errors) - MAX_ERRORS_PER_BODY} more")
        return instance

    def _check_lines(self, label, text, item_schema, source):
        """A sequential body (application/x-ndjson): every line ends in LF and is one JSON
        value that matches the media type's x-itemSchema."""
        if text and not text.endswith("\n"):
            self.fails.add(label, "the last line does not end in \\n")
        reported = 0
        for n, line in enumerate(text.split("\n")[:-1] if text else [], 1):
            try:
                item = strict_json(line)
            except ValueError as e:
                self.fails.add(label, f"line {n} is not JSON ({e}): {snippet(line, 200)}")
                reported += 1
            else:
                for err in self.spec.errors(item_schema, item)[:2]:
                    self.fails.add(label, f"line {n} does not match {source} x-itemSchema: {err}")
                    reported += 1
            if reported >= MAX_ERRORS_PER_BODY:
                self.fails.add(label, "... (no more lines checked)")
                return

    def request_ok(self, label, method, path, media_type, body, valid=True):
        """The test's own request body must (or must not) match the spec's request schema, so
        the spec and the test agree on what a good request is."""
        schema = self.spec.request_schema(method, path, media_type)
        errors = self.spec.errors(schema, body)
        if valid and errors:
            self.fails.add(label, f"the test's request does not match the spec: {errors[0]}")
        if not valid and not errors:
            self.fails.add(label, "the spec's request schema accepts this bad request")

    # -- scenarios ---------------------------------------------------------------------------

    def tx(self, n, **changes):
        t = {
            "id": f"openapi-check-{n}",
            "timestamp": f"2022-09-01T08:{n:02d}:30.250Z",
            "originator": {"account_id": "GB29NWBK60161331926819", "name": "Acme Trading Ltd",
                           "bank_id": "NWBKGB2L", "country": "GB"},
            "beneficiary": {"account_id": "DE89370400440532013000",
                            "name": "Müller Logistik GmbH", "bank_id": "COBADEFFXXX",
                            "country": "DE"},
            "amount": {"value": "9850.00", "currency": "USD"},
            "settled_amount": {"value": "8405.72", "currency": "EUR"},
            "payment_format": "wire",
            "channel": "online",
            "remittance": "Invoice 2022-0815",
            "priority": "P1",
        }
        t.update(changes)
        return t

    def score(self, label, tx, headers=None, expect=200, raw=None):
        body = raw if raw is not None else json.dumps(tx)
        h = {"Content-Type": "application/json"}
        h.update(headers or {})
        resp = self.send(label, "POST", "/v1/score", body, h)
        return resp, self.check(label, resp, expect, "POST", "/v1/score")

    def check_fresh_decision(self, label, resp, decision, tx_id):
        """What holds for a decision made by this request (not an idempotent repeat)."""
        f = self.fails
        if resp is None or resp.status != 200 or not isinstance(decision, dict):
            return  # the status mismatch is reported already
        f.expect(decision.get("transaction_id") == tx_id, label,
                 f"transaction_id {decision.get('transaction_id')!r}, expected {tx_id!r}")
        f.expect(decision.get("model_role") == "champion", label,
                 f"model_role {decision.get('model_role')!r}: a server started with --model "
                 f"and no challenger decides with the champion")
        for other_id, other in self.decisions.items():
            f.expect(other.get("trace_id") != decision.get("trace_id"), label,
                     f"trace_id {decision.get('trace_id')} already given to {other_id}")
        header = resp.headers.get("traceparent") if resp is not None else None
        hm = TRACEPARENT_RE.match(header or "")
        bm = TRACEPARENT_RE.match(decision.get("traceparent") or "")
        if hm and bm:
            f.expect(hm.group(1) == bm.group(1), label,
                     f"the traceparent header ({header}) and the decision's traceparent "
                     f"({decision['traceparent']}) are in different traces")
        self.decisions[tx_id] = decision

    def run(self):
        self.scenario("healthz", self.t_healthz)
        self.scenario("readyz", self.t_readyz)
        self.scenario("score", self.t_score_and_idempotency)
        self.scenario("traceparent", self.t_traceparent)
        self.scenario("batch", self.t_batch)
        self.scenario("bad requests", self.t_bad_requests)
        self.scenario("routing", self.t_routing)
        self.scenario("policy ingest", self.t_policy)
        self.scenario("activate", self.t_activate)
        self.scenario("shadow", self.t_shadow)
        self.scenario("readyz after", self.t_readyz_after)
        self.scenario("drift", self.t_drift)
        self.scenario("metrics", self.t_metrics)
        self.scenario("payment messages", self.t_payment_messages)
        self.scenario("audit export", self.t_audit_export)
        self.scenario("access", self.t_access)

    def scenario(self, name, fn):
        try:
            fn()
        except Exception as e:  # a broken answer must not hide the checks after it
            self.fails.add(name, f"the check itself failed on an unexpected answer: "
                           f"{type(e).__name__}: {e}")

    def t_healthz(self):
        r = self.send("GET /healthz", "GET", "/healthz")
        self.check("GET /healthz", r, 200, "GET", "/healthz")

    def t_readyz(self):
        r = self.send("GET /readyz", "GET", "/readyz")
        self.check("GET /readyz", r, 200, "GET", "/readyz")

    def t_score_and_idempotency(self):
        label = "POST /v1/score (happy path)"
        tx = self.tx(1)
        self.request_ok(label, "POST", "/v1/score", "application/json", tx)
        r1, d1 = self.score(label, tx)
        self.check_fresh_decision(label, r1, d1, tx["id"])
        self.first = d1

        label = "POST /v1/score (same id again)"
        r2, _ = self.score(label, tx)
        if r1 is not None and r2 is not None and r1.status == 200:
            self.fails.expect(r2.body == r1.body, label,
                              "a repeated transaction id must get the first decision byte for "
                              f"byte; first {snippet(r1.body, 200)} then {snippet(r2.body, 200)}")

        label = "POST /v1/score (numeric amount, required members only)"
        # 10:02+02:00 is 08:02Z: event times must not go back (the features refuse an event
        # more than their allowed lateness behind the latest one).
        tx = {"id": "openapi-check-2", "timestamp": "2022-09-01T10:02:00+02:00",
              "originator": {"account_id": "801CA7940"},
              "beneficiary": {"account_id": "8119D8750"},
              "amount": {"value": 51.43, "currency": "USD"}}
        self.request_ok(label, "POST", "/v1/score", "application/json", tx)
        r, d = self.score(label, tx)
        self.check_fresh_decision(label, r, d, tx["id"])

    def t_traceparent(self):
        label = "POST /v1/score (traceparent, X-Vigil-Budget-Ms 800)"
        trace_id, parent_id = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
        tx = self.tx(3)
        r, d = self.score(label, tx, {"traceparent": f"00-{trace_id}-{parent_id}-01",
                                      "X-Vigil-Budget-Ms": "800"})
        self.check_fresh_decision(label, r, d, tx["id"])
        if r is None or r.status != 200:
            return
        m = TRACEPARENT_RE.match(r.headers.get("traceparent") or "")
        if self.fails.expect(m, label, "no valid traceparent header in the answer"):
            self.fails.expect(m.group(1) == trace_id, label,
                              f"the answer's traceparent {m.group(0)} is not in the caller's "
                              f"trace {trace_id}")
            self.fails.expect(m.group(2) != parent_id, label,
                              "the answer's traceparent repeats the caller's span id instead of "
                              "naming vigil's span")
        if isinstance(d, dict):
            bm = TRACEPARENT_RE.match(d.get("traceparent") or "")
            self.fails.expect(bm and bm.group(1) == trace_id, label,
                              f"the decision's traceparent {d.get('traceparent')} is not in the "
                              f"caller's trace {trace_id}")

    def t_batch(self):
        label = "POST /v1/score/batch (3, the second bad)"
        good1, good2 = self.tx(4), self.tx(6)
        bad = self.tx(5, remitance="typo of remittance")
        self.request_ok(label, "POST", "/v1/score/batch", "application/json", [good1, good2])
        self.request_ok(label + " bad item", "POST", "/v1/score/batch", "application/json",
                        [bad], valid=False)
        r = self.send(label, "POST", "/v1/score/batch", json.dumps([good1, bad, good2]),
                      {"Content-Type": "application/json; charset=utf-8"})
        body = self.check(label, r, 200, "POST", "/v1/score/batch")
        if isinstance(body, dict) and isinstance(body.get("results"), list):
            results = body["results"]
            if self.fails.expect(len(results) == 3, label,
                                 f"{len(results)} results for 3 transactions"):
                for i, t in ((0, good1), (2, good2)):
                    self.fails.expect(results[i].get("transaction_id") == t["id"], label,
                                      f"results[{i}] is not the decision of {t['id']}: "
                                      f"{snippet(json.dumps(results[i]), 200)}")
                    if "transaction_id" in results[i]:
                        self.decisions[t["id"]] = results[i]
                item = results[1]
                self.fails.expect(item.get("index") == 1 and item.get("status") == 400, label,
                                  f"results[1] must be an item error with index 1 and status "
                                  f"400, got {snippet(json.dumps(item), 200)}")
                err = item.get("error") or {}
                self.fails.expect(err.get("code") == "unknown_field"
                                  and err.get("field") == "$.remitance", label,
                                  f"results[1].error must be unknown_field at $.remitance, got "
                                  f"{err.get('code')!r} at {err.get('field')!r}")

        label = "POST /v1/score/batch (an object, not an array)"
        r = self.send(label, "POST", "/v1/score/batch", json.dumps(self.tx(7)),
                      {"Content-Type": "application/json"})
        self.check(label, r, 400, "POST", "/v1/score/batch")

        label = "POST /v1/score/batch (empty array)"
        r = self.send(label, "POST", "/v1/score/batch", "[]", {"Content-Type": "application/json"})
        self.check(label, r, 400, "POST", "/v1/score/batch")

        label = "POST /v1/score/batch (malformed JSON)"
        r = self.send(label, "POST", "/v1/score/batch", "[{\"id\": ",
                      {"Content-Type": "application/json"})
        self.check(label, r, 400, "POST", "/v1/score/batch")

        label = "POST /v1/score/batch (application/yaml)"
        r = self.send(label, "POST", "/v1/score/batch", json.dumps([self.tx(7)]),
                      {"Content-Type": "application/yaml"})
        body = self.check(label, r, 415, "POST", "/v1/score/batch")
        self.expect_code(label, body, "unsupported_media_type")

    def expect_code(self, label, body, code, field=None):
        if not isinstance(body, dict) or not isinstance(body.get("error"), dict):
            return
        err = body["error"]
        self.fails.expect(err.get("code") == code, label,
                          f"error.code {err.get('code')!r}, expected {code!r}")
        if field is not None:
            self.fails.expect(str(err.get("field", "")).lower() == field.lower(), label,
                              f"error.field {err.get('field')!r}, expected {field!r}")

    def t_payment_messages(self):
        # Last: a payment message is timed by its arrival, after which the JSON scenarios'
        # 2022 event times would be too late for the accounts' windows.
        label = "POST /v1/score (SWIFT MT103)"
        _, body = self.score(label, None, raw=read_testdata("swift_mt/messages/mt103_0004.fin"),
                             headers={"Content-Type": "application/x-swift-mt"}, expect=200)

        label = "POST /v1/score (ISO 20022 pacs.008)"
        _, body = self.score(label, None,
                             raw=read_testdata("iso20022/messages/mx_pacs.008.001.12_0006.xml"),
                             headers={"Content-Type": "application/xml"}, expect=200)

        # The samples' MT103 0004 and this pacs.008 are one payment in two syntaxes (one UETR):
        # the MT103's decision again.
        label = "POST /v1/score (ISO 20022 pacs.008, the MT103's payment)"
        _, body = self.score(label, None,
                             raw=read_testdata("iso20022/messages/mx_pacs.008.001.08_0008.xml"),
                             headers={"Content-Type": "application/xml"}, expect=200)

        # The same UETR with another amount: the id is taken.
        label = "POST /v1/score (ISO 20022 pacs.008 under the MT103's UETR, another amount)"
        other = read_testdata("iso20022/messages/mx_pacs.008.001.08_0008.xml").replace(
            '<pacs:IntrBkSttlmAmt Ccy="USD">100<', '<pacs:IntrBkSttlmAmt Ccy="USD">900000<', 1)
        _, body = self.score(label, None, raw=other,
                             headers={"Content-Type": "application/xml"}, expect=409)
        self.expect_code(label, body, "idempotency_conflict", "$")

        label = "POST /v1/score (SWIFT MT205: unsupported)"
        _, body = self.score(label, None, raw=read_testdata("swift_mt/messages/mt205_0001.fin"),
                             headers={"Content-Type": "application/x-swift-mt"}, expect=422)
        self.expect_code(label, body, "unsupported_message_type", "$")

        label = "POST /v1/score/batch (ISO 20022 pacs.009)"
        r = self.send(label, "POST", "/v1/score/batch",
                      read_testdata("iso20022/messages/mx_pacs.009.001.08_0002.xml"),
                      {"Content-Type": "application/xml"})
        body = self.check(label, r, 200, "POST", "/v1/score/batch")
        if isinstance(body, dict):
            self.fails.expect(len(body.get("results", [])) == 1, label, "expected one result")

    # -- GET /v1/audit/export ----------------------------------------------------------------

    def export_page(self, label, query, expect=200, token="auditor"):
        """GET /v1/audit/export?query, checked against the spec. Returns (response, lines):
        lines are the parsed JSON lines of a 200 (None otherwise)."""
        path = "/v1/audit/export"
        r = self.send(label, "GET", path + (f"?{query}" if query else ""), token=token)
        body = self.check(label, r, expect, "GET", path)
        if r is None or r.status != 200 or expect != 200:
            return r, body
        f = self.fails
        ctype, _ = parse_media_type(r.headers.get("Content-Type") or "")
        f.expect(ctype == "application/x-ndjson", label,
                 f"Content-Type {r.headers.get('Content-Type')!r}, expected application/x-ndjson")
        lines = []
        for n, line in enumerate(r.body.decode("utf-8", "replace").split("\n"), 1):
            if not line:
                continue
            try:
                lines.append(strict_json(line))
            except ValueError as e:
                f.add(label, f"line {n} is not JSON: {e}")
        records = [x for x in lines if isinstance(x, dict) and "data_key" not in x]
        count = r.headers.get("X-Vigil-Records")
        f.expect(count == str(len(records)), label,
                 f"X-Vigil-Records {count!r}, the page holds {len(records)} record lines")
        # Self-contained: each record's data key comes before it, once per page.
        keys = set()
        for x in lines:
            if not isinstance(x, dict):
                continue
            if "data_key" in x:
                key = x["data_key"] if isinstance(x["data_key"], dict) else {}
                f.expect(key.get("id") not in keys, label,
                         f"data key {key.get('id')} given twice on one page")
                keys.add(key.get("id"))
                if self.kek_id is not None:
                    f.expect(key.get("kek_id") == self.kek_id, label,
                             f"data key {key.get('id')} is wrapped by {key.get('kek_id')}, "
                             f"expected the --record-kek {self.kek_id}")
            elif "data_key_id" in x:
                f.expect(x["data_key_id"] in keys, label,
                         f"record {x.get('sequence')} is sealed under data key "
                         f"{x['data_key_id']}, which no line before it on the page carries")
        return r, lines

    def t_audit_export(self):
        f = self.fails
        path = "/v1/audit/export"
        f.expect(("GET", path) in self.spec.operations(), f"GET {path}",
                 "the route is not in the spec")

        # The whole log on one page.
        label = f"GET {path}?limit=10000 (auditor)"
        r, lines = self.export_page(label, "limit=10000")
        if not isinstance(lines, list):
            return
        f.expect(r.headers.get("X-Vigil-Next-From") is None, label,
                 f"X-Vigil-Next-From {r.headers.get('X-Vigil-Next-From')!r} on the only page")
        records = [x for x in lines if isinstance(x, dict) and "sequence" in x]
        sequences = [x["sequence"] for x in records]
        f.expect(sequences == list(range(len(records))), label,
                 f"sequences {sequences}, expected 0..{len(records) - 1} in order")
        if not f.expect(len(records) >= len(self.decisions) > 0, label,
                        f"{len(records)} records, {len(self.decisions)} decisions were answered"):
            return
        by_id = {x["transaction"]["id"]: x for x in records
                 if isinstance(x.get("transaction"), dict)}
        admin = (self.tokens.get("admin") or "")[4:20]
        for tx_id, answered in self.decisions.items():
            x = by_id.get(tx_id)
            if not f.expect(x is not None, label, f"no record of transaction {tx_id}"):
                continue
            f.expect(x.get("decision") == answered, label,
                     f"record {x.get('sequence')}'s decision is not the one answered for {tx_id}")
            f.expect(x.get("actor") == f"token:{admin}", label,
                     f"record {x.get('sequence')}: actor {x.get('actor')!r}, expected "
                     f"'token:{admin}' (the admin token scored it)")
        # --record-kek: personal fields sealed, never in the body.
        body = r.body.decode("utf-8", "replace")
        f.expect('{"sealed":' in body, label, 'no {"sealed": ...} field under --record-kek')
        f.expect(all("data_key_id" in x for x in records), label,
                 "a record without data_key_id under --record-kek")
        for secret in ("Acme Trading Ltd", "Müller Logistik GmbH", "GB29NWBK60161331926819",
                       "Invoice 2022-0815"):
            f.expect(secret not in body, label,
                     f"{secret!r} (a sealed personal field) is in the export in the clear")
        self.open_offline(label, body, len(records))

        # Paging: the pages cover every record exactly once.
        limit = 3
        seen, query, pages = [], f"limit={limit}", 0
        while query is not None and pages <= len(records):
            pages += 1
            label = f"GET {path}?{query}"
            r, page = self.export_page(label, query)
            if not isinstance(page, list):
                break
            got = [x["sequence"] for x in page if isinstance(x, dict) and "sequence" in x]
            seen += got
            f.expect(len(got) <= limit, label, f"{len(got)} records, over limit={limit}")
            following = r.headers.get("X-Vigil-Next-From")
            if following is None:
                query = None
            else:
                f.expect(len(got) == limit and following == str(got[-1] + 1), label,
                         f"X-Vigil-Next-From {following!r} after records {got}")
                query = f"limit={limit}&from={following}"
        f.expect(sorted(seen) == sequences and len(set(seen)) == len(seen), f"GET {path} paging",
                 f"pages of {limit} gave records {seen}, expected {sequences} once each")
        f.expect(pages == -(-len(records) // limit), f"GET {path} paging",
                 f"{pages} pages for {len(records)} records of {limit}")

        # [since, until), percent-encoded; and one transaction.
        if len(records) >= 3:
            since, until = records[1]["decided"], records[-1]["decided"]
            want = [x["sequence"] for x in records if since <= x["decided"] < until]
            query = f"since={since.replace(':', '%3A')}&until={until.replace(':', '%3A')}"
            label = f"GET {path}?{query}"
            _, page = self.export_page(label, query)
            if isinstance(page, list):
                got = [x["sequence"] for x in page if isinstance(x, dict) and "sequence" in x]
                f.expect(got == want, label, f"records {got}, expected {want}")
        label = f"GET {path}?since=2022-01-01T00:00:00%2B02:00 (offset, + encoded)"
        _, page = self.export_page(label, "since=2022-01-01T00:00:00%2B02:00")
        if isinstance(page, list):
            f.expect(len([x for x in page if "sequence" in x]) == len(records), label,
                     "every record was decided after 2022")
        first = self.tx(1)["id"]
        label = f"GET {path}?transaction_id={first}"
        r, page = self.export_page(label, f"transaction_id={first}")
        if isinstance(page, list):
            got = [x for x in page if isinstance(x, dict) and "sequence" in x]
            f.expect(len(got) == 1 and got[0]["transaction"]["id"] == first, label,
                     f"expected the one record of {first}, got {len(got)} records")
            f.expect(r.headers.get("X-Vigil-Next-From") is None, label,
                     "X-Vigil-Next-From for one transaction")

        # Errors.
        for query, field in (("limit=0", "limit"), ("limit=10001", "limit"),
                             ("limit=ten", "limit"), ("from=x", "from"),
                             ("since=yesterday", "since"),
                             ("since=2022-01-01T00:00:00+02:00", "since"),
                             ("until=2026-01-01T00%3", "until"),
                             (f"transaction_id={first}&from=1", "transaction_id")):
            label = f"GET {path}?{query}"
            _, body = self.export_page(label, query, expect=400)
            self.expect_code(label, body, "invalid_field", field)
        label = f"GET {path}?transaction_id=openapi-check-unknown"
        _, body = self.export_page(label, "transaction_id=openapi-check-unknown", expect=404)
        self.expect_code(label, body, "not_found", "transaction_id")
        label = f"GET {path} (scorer token)"
        _, body = self.export_page(label, "", expect=403, token="scorer")
        self.expect_code(label, body, "forbidden", "Authorization")
        label = f"GET {path}?limit=1 (admin token)"
        self.export_page(label, "limit=1", token="admin")

        # A sealed log verifies without any key.
        label = "GET /v1/audit/verify (sealed log, auditor)"
        r = self.send(label, "GET", "/v1/audit/verify", token="auditor")
        report = self.check(label, r, 200, "GET", "/v1/audit/verify")
        if isinstance(report, dict):
            f.expect(report.get("records") == len(records)
                     and report.get("sealed_records") == len(records)
                     and (report.get("data_keys") or 0) >= 1, label,
                     f"records {report.get('records')}, sealed_records "
                     f"{report.get('sealed_records')}, data_keys {report.get('data_keys')}; "
                     f"the export holds {len(records)} sealed records")

    def open_offline(self, label, body, records):
        """`vigil audit open --kek PRIVATE --input PAGE` opens what the server exported."""
        label = f"{label}: vigil audit open --kek"
        page = os.path.join(self.tmp, "export_page.ndjson")
        with open(page, "w", encoding="utf-8") as out:
            out.write(body)
        cmd = [self.args.vigil, "audit", "open", "--kek", self.kek_path, "--input", page]
        try:
            p = subprocess.run(cmd, capture_output=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as e:
            self.fails.add(label, f"could not run: {e}")
            return
        if not self.fails.expect(p.returncode == 0, label,
                                 f"exit status {p.returncode}; stderr: {snippet(p.stderr)}"):
            return
        text = p.stdout.decode("utf-8", "replace")
        lines = [strict_json(line) for line in text.splitlines() if line]
        self.fails.expect(len(lines) == records, label,
                          f"{len(lines)} lines opened, the page holds {records} records")
        self.fails.expect('"sealed"' not in text and "Acme Trading Ltd" in text, label,
                          "the opened export still has sealed fields, or not the originator's "
                          "name")
        schema = {"$ref": "#/components/schemas/AuditExportLine"}
        for n, line in enumerate(lines, 1):
            for err in self.spec.errors(schema, line)[:1]:
                self.fails.add(label, f"opened line {n}: {err}")

    def t_bad_requests(self):
        label = "POST /v1/score (malformed JSON)"
        _, body = self.score(label, None, raw='{"id": "openapi-check-8", "amount": {"value": }',
                             expect=400)
        self.expect_code(label, body, "invalid_json")

        label = "POST /v1/score (bad amount.value)"
        tx = self.tx(8, amount={"value": "12,50", "currency": "USD"})
        self.request_ok(label, "POST", "/v1/score", "application/json", tx, valid=False)
        _, body = self.score(label, tx, expect=400)
        self.expect_code(label, body, "invalid_amount", "$.amount.value")

        label = "POST /v1/score (missing beneficiary)"
        tx = self.tx(8)
        del tx["beneficiary"]
        _, body = self.score(label, tx, expect=400)
        self.expect_code(label, body, "missing_field", "$.beneficiary")

        label = "POST /v1/score (application/yaml)"
        _, body = self.score(label, None, raw=json.dumps(self.tx(8)),
                             headers={"Content-Type": "application/yaml"}, expect=415)
        self.expect_code(label, body, "unsupported_media_type")

        label = "POST /v1/score (text/plain: a JSON body is not a SWIFT MT message)"
        _, body = self.score(label, None, raw=json.dumps(self.tx(8)),
                             headers={"Content-Type": "text/plain"}, expect=400)
        self.expect_code(label, body, "invalid_message", "$")

        label = "POST /v1/score (X-Vigil-Budget-Ms 801)"
        _, body = self.score(label, self.tx(8), headers={"X-Vigil-Budget-Ms": "801"}, expect=400)
        self.expect_code(label, body, "invalid_field", "X-Vigil-Budget-Ms")

    def t_routing(self):
        label = "GET /v1/does-not-exist"
        r = self.send(label, "GET", "/v1/does-not-exist")
        body = self.check(label, r, 404, "GET", "/v1/does-not-exist", component="NotFound")
        self.expect_code(label, body, "not_found")

        for method, path in (("GET", "/v1/score"), ("POST", "/healthz")):
            label = f"{method} {path} (wrong method)"
            r = self.send(label, method, path, "{}" if method == "POST" else None,
                          {"Content-Type": "application/json"} if method == "POST" else None)
            body = self.check(label, r, 405, method, path, component="MethodNotAllowed")
            self.expect_code(label, body, "method_not_allowed")
            if r is not None and r.status == 405:
                allow = {m.strip().upper() for m in (r.headers.get("Allow") or "").split(",")
                         if m.strip()}
                want = self.spec.methods_of(path)
                self.fails.expect(want <= allow and allow - want <= {"HEAD", "OPTIONS"}, label,
                                  f"Allow {r.headers.get('Allow')!r}, expected {sorted(want)}")

    def ingest(self, label, text, content_type, query="", expect=200):
        r = self.send(label, "POST", "/v1/policy/ingest" + query, text,
                      {"Content-Type": content_type})
        return self.check(label, r, expect, "POST", "/v1/policy/ingest")

    def t_policy(self):
        with open(self.args.policy, encoding="utf-8") as f:
            text = f.read()
        parsed = yaml.safe_load(text)
        sha = hashlib.sha256(text.encode("utf-8")).hexdigest()

        label = "POST /v1/policy/ingest (default policy, YAML)"
        self.request_ok(label, "POST", "/v1/policy/ingest", "application/yaml", parsed)
        body = self.ingest(label, text, "application/yaml")
        if isinstance(body, dict) and "tag" in body:
            f = self.fails
            f.expect(body.get("version") == parsed.get("version"), label,
                     f"version {body.get('version')!r}, the policy says {parsed.get('version')!r}")
            f.expect(body.get("sha256") == sha, label,
                     f"sha256 {body.get('sha256')} is not the SHA-256 of the text sent ({sha})")
            f.expect(body.get("tag") == f"{parsed.get('version')}@{sha[:12]}", label,
                     f"tag {body.get('tag')!r}, expected version@sha256[:12]")
            f.expect(body.get("active") is True, label, "activate defaults to true")
            self.policy_id = body.get("id")
            first = self.first
            if isinstance(first, dict):
                f.expect(first.get("policy_version") == body.get("tag"), label,
                         f"decisions under --policy {self.args.policy} report "
                         f"{first.get('policy_version')!r}, the same text ingested is "
                         f"{body.get('tag')!r}")

        label = "POST /v1/policy/ingest?activate=false (same policy as JSON)"
        as_json = json.dumps(parsed)
        body = self.ingest(label, as_json, "application/json", "?activate=false")
        if isinstance(body, dict) and "active" in body:
            self.fails.expect(body.get("active") is False, label, "active must be false")
            self.fails.expect(
                body.get("sha256") == hashlib.sha256(as_json.encode()).hexdigest(), label,
                "sha256 is not the SHA-256 of the text sent")
            self.fails.expect(body.get("id") != self.policy_id, label,
                              f"another text must be another version, got id {body.get('id')}")

        label = "POST /v1/policy/ingest (invalid policy)"
        bad = ('version: "openapi-check-invalid"\n'
               'thresholds:\n  review: 0.9\n  block: 0.5\n'
               'rules:\n'
               '  - id: bad.name\n    when: orig_out_cnt_24h >= 3\n    action: escalate\n'
               '    reason: "x"\n')
        self.request_ok(label, "POST", "/v1/policy/ingest", "text/yaml", yaml.safe_load(bad),
                        valid=False)
        body = self.ingest(label, bad, "text/yaml", expect=422)
        self.expect_code(label, body, "policy_invalid")
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            details = body["error"].get("details") or []
            lines = sorted(int(m.group(1)) for m in
                           (re.match(r"^[^\n]+?:([0-9]+):[0-9]+: ", str(d)) for d in details) if m)
            self.fails.expect(lines == [3, 7, 8], label,
                              f"details must report the 3 problems (lines 3, 7, 8: thresholds, "
                              f"unknown name, unknown action), one string each; got "
                              f"{snippet(json.dumps(details), 400)}")

        label = "POST /v1/policy/ingest (text/plain)"
        body = self.ingest(label, text, "text/plain", expect=415)
        self.expect_code(label, body, "unsupported_media_type")

    def activate(self, label, payload, expect, raw=None, content_type="application/json"):
        body = raw if raw is not None else json.dumps(payload)
        r = self.send(label, "POST", "/v1/engine/activate", body, {"Content-Type": content_type})
        return self.check(label, r, expect, "POST", "/v1/engine/activate")

    def t_activate(self):
        ref = self.model_ref or "0" * 64
        unknown = "0123456789abcdef" * 4
        if ref.startswith(unknown[:8]):
            unknown = "fedcba9876543210" * 4
        label = "POST /v1/engine/activate (unknown ref)"
        req = {"model_ref": unknown, "shadow": True}
        self.request_ok(label, "POST", "/v1/engine/activate", "application/json", req)
        body = self.activate(label, req, 404)
        self.expect_code(label, body, "model_not_found")

        label = "POST /v1/engine/activate (traffic_weight 1.5)"
        req = {"model_ref": ref, "traffic_weight": 1.5}
        self.request_ok(label, "POST", "/v1/engine/activate", "application/json", req,
                        valid=False)
        body = self.activate(label, req, 400)
        self.expect_code(label, body, "invalid_field", "$.traffic_weight")

        label = "POST /v1/engine/activate (model_ref a number)"
        req = {"model_ref": 12345678, "shadow": True}
        self.request_ok(label, "POST", "/v1/engine/activate", "application/json", req,
                        valid=False)
        body = self.activate(label, req, 400)
        self.expect_code(label, body, "invalid_field", "$.model_ref")

        label = "POST /v1/engine/activate (malformed JSON)"
        body = self.activate(label, None, 400, raw='{"model_ref": ')
        self.expect_code(label, body, "invalid_json")

        label = "POST /v1/engine/activate (text/plain)"
        body = self.activate(label, None, 415, raw=json.dumps({"model_ref": ref}),
                             content_type="text/plain")
        self.expect_code(label, body, "unsupported_media_type")

        if self.model_ref is None:
            self.fails.add("POST /v1/engine/activate (shadow)", "not sent: vigil model add failed")
            return
        label = "POST /v1/engine/activate (shadow)"
        req = {"model_ref": ref, "shadow": True}
        self.request_ok(label, "POST", "/v1/engine/activate", "application/json", req)
        body = self.activate(label, req, 200)
        self.check_slots(label, body)

        label = "POST /v1/engine/activate (shadow, by 8-digit prefix)"
        body = self.activate(label, {"model_ref": ref[:8], "shadow": True}, 200)
        self.check_slots(label, body)

    def check_slots(self, label, body):
        if not isinstance(body, dict):
            return
        f = self.fails
        shadow, champion = body.get("shadow"), body.get("champion")
        f.expect(isinstance(shadow, dict) and shadow.get("ref") == self.model_ref, label,
                 f"shadow.ref must be the full ref {self.model_ref}, got {shadow!r}")
        if isinstance(shadow, dict):
            f.expect(str(shadow.get("model_version", "")).endswith("@" + self.model_ref[:12]),
                     label, f"shadow.model_version {shadow.get('model_version')!r} does not end "
                     f"in @{self.model_ref[:12]}")
        f.expect(isinstance(champion, dict), label,
                 "champion must stay set: the server was started with --model")
        first = self.first
        if isinstance(champion, dict) and isinstance(first, dict):
            f.expect(champion.get("model_version") == first.get("model_version"), label,
                     f"champion.model_version {champion.get('model_version')!r}, decisions "
                     f"report {first.get('model_version')!r}")
        f.expect(body.get("challenger") is None, label, "no challenger was activated")

    def t_shadow(self):
        if self.model_ref is None:
            return
        label = "POST /v1/score (with a shadow model)"
        tx = self.tx(9)
        r, d = self.score(label, tx)
        self.check_fresh_decision(label, r, d, tx["id"])
        if isinstance(d, dict):
            shadow = d.get("shadow")
            if self.fails.expect(isinstance(shadow, dict), label,
                                 "the decision has no shadow object while a shadow is active"):
                self.fails.expect(
                    str(shadow.get("model_version", "")).endswith("@" + self.model_ref[:12]),
                    label, f"shadow.model_version {shadow.get('model_version')!r} is not the "
                    f"activated model (@{self.model_ref[:12]})")
        first = self.first
        if isinstance(first, dict):
            self.fails.expect("shadow" not in first, "POST /v1/score (happy path)",
                              "a shadow object before any shadow model was activated")

    def t_readyz_after(self):
        label = "GET /readyz (after the changes)"
        r = self.send(label, "GET", "/readyz")
        ready = self.check(label, r, 200, "GET", "/readyz")
        first = self.first
        if isinstance(ready, dict) and isinstance(first, dict):
            for key in ("policy_version", "model_version"):
                self.fails.expect(ready.get(key) == first.get(key), label,
                                  f"{key} {ready.get(key)!r}, decisions report "
                                  f"{first.get(key)!r} (activate=false must not change it)")

    def t_drift(self):
        label = "GET /v1/drift"
        # The monitor observes decisions on a thread of its own: wait until it has seen some
        # (the payments scored above span several minutes of event time, so windows were
        # evaluated and the state has values, not only defaults).
        deadline = time.monotonic() + REQUEST_TIMEOUT_S
        while True:
            r = self.send(label, "GET", "/v1/drift")
            body = strict_json(r.body.decode("utf-8", "replace")) if r is not None and \
                r.status == 200 else None
            if not isinstance(body, dict) or body.get("evaluations", 0) > 0 or \
                    time.monotonic() > deadline:
                break
            time.sleep(0.05)
        state = self.check(label, r, 200, "GET", "/v1/drift")
        if isinstance(state, dict):
            self.fails.expect(state.get("rows", 0) > 0, label,
                              f"rows {state.get('rows')!r}: the decisions above were not observed")
            names = {s.get("name") for s in state.get("subjects", [])}
            self.fails.expect({"amount_reporting", "is_cross_currency", "model_score"} <= names,
                              label, f"subjects {sorted(names)!r}")

    def t_metrics(self):
        label = "GET /metrics"
        r = self.send(label, "GET", "/metrics")
        text = self.check(label, r, 200, "GET", "/metrics")
        if isinstance(text, str):
            self.fails.expect("# TYPE" in text, label, "no '# TYPE' line: not Prometheus text")
            self.fails.expect("vigil_drift_severity{" in text, label,
                              "no vigil_drift_severity series while drift is on")


    def t_access(self):
        """401 without or with a bad credential, 403 for a role that may not, on every route."""
        routes = [("POST", "/v1/score", "scorer"), ("POST", "/v1/score/batch", "scorer"),
                  ("POST", "/v1/policy/ingest", "policy-admin"),
                  ("POST", "/v1/engine/activate", "policy-admin"),
                  ("GET", "/v1/drift", "auditor"), ("GET", "/v1/audit/verify", "auditor"),
                  ("GET", "/v1/audit/export", "auditor"), ("GET", "/metrics", None)]
        bad = "vgl_0123456789abcdef_" + "A" * 43
        for method, path, role in routes:
            label = f"{method} {path} (no credential)"
            r = self.send(label, method, path, body=b"{}" if method == "POST" else None,
                          headers={"Content-Type": "application/json"}, token=None)
            body = self.check(label, r, 401, method, path)
            if isinstance(body, dict):
                self.fails.expect(body["error"]["code"] == "unauthenticated", label,
                                  f"code {body['error']['code']!r}")
            label = f"{method} {path} (unknown token)"
            r = self.send(label, method, path, body=b"{}" if method == "POST" else None,
                          headers={"Content-Type": "application/json",
                                   "Authorization": f"Bearer {bad}"})
            self.check(label, r, 401, method, path)
            if r is not None:
                self.fails.expect(bad[21:] not in r.body.decode("utf-8", "replace"), label,
                                  "the answer repeats the token")
            if role is None:
                continue
            other = "auditor" if role != "auditor" else "scorer"
            label = f"{method} {path} ({other} token)"
            r = self.send(label, method, path, body=b"{}" if method == "POST" else None,
                          headers={"Content-Type": "application/json"}, token=other)
            body = self.check(label, r, 403, method, path)
            if isinstance(body, dict):
                self.fails.expect(body["error"]["code"] == "forbidden", label,
                                  f"code {body['error']['code']!r}")
        for path in ("/healthz", "/readyz"):
            label = f"GET {path} (no credential: public)"
            self.check(label, self.send(label, "GET", path, token=None), 200, "GET", path)


class CasesLive(Live):
    """A second server for the cases and the workbench (docs/cases.md): its log is written in
    the clear (cases read the accounts; a sealing log keeps none), with two analysts, a
    supervisor, a scorer, the cases test policy (REVIEW above 1,000, BLOCK above 50,000) and a
    one-entry watchlist, so that every /v1/cases and /ui route is answered and checked."""

    LIST = ("id,name,aliases,type,countries,identifiers,list\n"
            "T1,ACME SANCTIONED TRADING LLC,,entity,Iran,,CHECK LIST\n")

    def start(self):
        self.tokens = {role: self.create_token(role)
                       for role in ("admin", "scorer", "analyst", "supervisor")}
        self.tokens["analyst2"] = self.create_token("analyst")
        watchlist = os.path.join(self.tmp, "watchlist.csv")
        with open(watchlist, "w", encoding="utf-8") as f:
            f.write(self.LIST)
        cmd = [self.args.vigil, "serve", "--listen", "127.0.0.1:0", "--data-dir", self.data_dir,
               "--model", self.args.model, "--policy", self.args.cases_policy,
               "--fx-rates", self.args.fx_rates, "--screening-list", watchlist, "--plaintext"]
        return self._launch(cmd)

    def run(self):
        self.scenario("cases", self.t_cases)
        self.scenario("workbench", self.t_workbench)

    def get(self, label, path, expect, token="analyst", headers=None, spec_path=None):
        r = self.send(label, "GET", path, None, headers, token=token)
        return r, self.check(label, r, expect, "GET", spec_path or path.split("?")[0])

    def post(self, label, path, body, expect, token="analyst", spec_path=None):
        r = self.send(label, "POST", path, json.dumps(body),
                      {"Content-Type": "application/json"}, token=token)
        return self.check(label, r, expect, "POST", spec_path or path)

    def t_cases(self):
        pays = [self.tx(1, id="cases-1", originator={"account_id": "A1", "name": "Payer One"},
                        amount={"value": "5000.00", "currency": "USD"}),
                self.tx(2, id="cases-2", originator={"account_id": "A2", "name": "Payer Two"},
                        amount={"value": "90000.00", "currency": "USD"}),
                self.tx(3, id="cases-3", originator={"account_id": "A3", "name": "Payer Three"},
                        beneficiary={"account_id": "B3", "name": "ACME SANCTIONED TRADING LLC"},
                        amount={"value": "120.00", "currency": "USD"})]
        for t in pays:
            t.pop("settled_amount", None)
            resp = self.send("POST /v1/score (cases)", "POST", "/v1/score", json.dumps(t),
                             {"Content-Type": "application/json"}, token="scorer")
            self.check("POST /v1/score (cases)", resp, 200, "POST", "/v1/score")
        listed = None
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            _, listed = self.get("GET /v1/cases", "/v1/cases?state=unclosed&limit=10", 200)
            if listed and listed.get("total") == 3:
                break
            time.sleep(0.2)
        if not self.fails.expect(listed and listed.get("total") == 3, "GET /v1/cases",
                                 f"three cases from the decision log, got {listed}"):
            return
        by_subject = {c["subject"]: c["id"] for c in listed["cases"]}
        T = "/v1/cases/{case_id}"
        self.get("GET /v1/cases?state=lost", "/v1/cases?state=lost", 400)
        self.get("GET /v1/cases as scorer", "/v1/cases", 403, token="scorer")
        self.get("GET /v1/cases without a token", "/v1/cases", 401, token=None)
        self.get("GET /v1/cases/case-999", "/v1/cases/case-999", 404, spec_path=T)
        self.get("GET /v1/cases/stats", "/v1/cases/stats", 200)
        first = listed["cases"][0]["id"]
        self.get("GET series", f"/v1/cases/{first}/series", 200, spec_path=T + "/series")
        self.get("GET series (features)", f"/v1/cases/{first}/series?features=amount_reporting",
                 200, spec_path=T + "/series")
        self.get("GET series (unknown feature)", f"/v1/cases/{first}/series?features=nope", 400,
                 spec_path=T + "/series")
        nxt = self.post("POST /v1/cases/next", "/v1/cases/next", {}, 200)
        taken = nxt["case"]["id"] if nxt else by_subject["A2"]
        _, detail = self.get("GET /v1/cases/{id}", f"/v1/cases/{taken}", 200, spec_path=T)
        seq = detail["alerts"][0]["sequence"] if detail else 0
        self.get("GET decision", f"/v1/cases/{taken}/decision?sequence={seq}", 200,
                 spec_path=T + "/decision")
        self.get("GET decision without a sequence", f"/v1/cases/{taken}/decision", 400,
                 spec_path=T + "/decision")
        self.get("GET decision of another case's alert",
                 f"/v1/cases/{taken}/decision?sequence={seq + 1000}", 404,
                 spec_path=T + "/decision")
        proof = None
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            proof = self.send("GET proof", "GET", f"/v1/cases/{taken}/proof?sequence={seq}",
                              token="analyst")
            if proof is None or proof.status != 409:
                break
            self.check("GET proof (not yet covered)", proof, 409, "GET", T + "/proof")
            time.sleep(0.2)
        self.check("GET proof", proof, 200, "GET", T + "/proof")
        def act(label, case_id, action, body, expect, token="analyst"):
            return self.post(label, f"/v1/cases/{case_id}/{action}", body, expect, token=token,
                             spec_path=f"{T}/{action}")
        act("claim a held case", taken, "claim", {}, 409, token="analyst2")
        act("note", taken, "note", {"text": "called the customer"}, 200)
        act("close without an outcome", taken, "close", {"text": "x"}, 400)
        act("close with an unknown field", taken, "close", {"verdict": "x"}, 400)
        act("assign as an analyst", taken, "assign", {"assignee": "token:x"}, 403)
        act("release", taken, "release", {}, 200)
        act("claim", taken, "claim", {}, 200)
        act("escalate", taken, "escalate", {"text": "needs a supervisor"}, 200)
        act("claim escalated as supervisor", taken, "claim", {}, 200, token="supervisor")
        closed = act("close (four eyes: proposed)", taken, "close",
                     {"outcome": "suspicious_reported", "text": "layering through B"}, 200,
                     token="supervisor")
        if closed:
            self.fails.expect(closed["case"]["state"] == "awaiting_approval", "close",
                              f"four eyes: {closed['case']['state']}")
        act("approve own closing", taken, "approve", {}, 409, token="supervisor")
        act("reject", taken, "reject", {"text": "add the contract"}, 200)
        act("close again", taken, "close",
            {"outcome": "suspicious_reported", "text": "layering through B"}, 200,
            token="supervisor")
        act("approve", taken, "approve", {}, 200, token="analyst2")
        R = T + "/report"
        self.get("GET report (goAML)", f"/v1/cases/{taken}/report", 200, spec_path=R)
        self.get("GET report (html)", f"/v1/cases/{taken}/report?format=html", 200, spec_path=R)
        self.get("GET report (pdf)", f"/v1/cases/{taken}/report?format=pdf", 400, spec_path=R)
        self.get("GET report of an open case", f"/v1/cases/{by_subject['A1']}/report", 409,
                 spec_path=R)
        act("reopen as an analyst", taken, "reopen", {"text": "new facts"}, 403)
        act("reopen", taken, "reopen", {"text": "new facts"}, 200, token="supervisor")
        act("assign", taken, "assign", {"assignee": "token:x"}, 200, token="supervisor")
        # The screening hit of A3's case, reviewed and cleared.
        hit_case = by_subject["A3"]
        act("claim the screening case", hit_case, "claim", {}, 200)
        _, hd = self.get("GET the screening case", f"/v1/cases/{hit_case}", 200, spec_path=T)
        hseq = hd["alerts"][0]["sequence"] if hd else 0
        review = {"sequence": hseq, "hit": "CHECK LIST:T1", "verdict": "cleared",
                  "expires": "2099-01-01T00:00:00Z", "text": "a namesake"}
        self.request_ok("POST screening", "POST", T + "/screening", "application/json", review)
        act("review a hit, a bad verdict", hit_case, "screening", dict(review, verdict="maybe"),
            400)
        act("review a hit, cleared too far", hit_case, "screening", review, 400)
        review["expires"] = time.strftime("%Y-%m-%dT00:00:00Z",
                                          time.gmtime(time.time() + 30 * 86400))
        act("review a hit", hit_case, "screening", review, 200)
        self.get("GET /v1/screening/clearances", "/v1/screening/clearances", 200)
        note = b"Passport copy checked: date of birth differs from the entry's.\n"
        r = self.send("POST attachments", "POST",
                      f"/v1/cases/{hit_case}/attachments?name=kyc.txt&text=KYC", note,
                      {"Content-Type": "text/plain"}, token="analyst")
        self.check("POST attachments", r, 200, "POST", T + "/attachments")
        r = self.send("POST attachments (html)", "POST",
                      f"/v1/cases/{hit_case}/attachments?name=x.html", b"<b>x</b>",
                      {"Content-Type": "text/html"}, token="analyst")
        self.check("POST attachments (html)", r, 400, "POST", T + "/attachments")
        digest = hashlib.sha256(note).hexdigest()
        r, _ = self.get("GET attachment", f"/v1/cases/{hit_case}/attachment?sha256={digest}", 200,
                        spec_path=T + "/attachment")
        if r is not None:
            self.fails.expect(r.body == note, "GET attachment", "the bytes as attached")
        self.get("GET attachment (unknown)", f"/v1/cases/{hit_case}/attachment?sha256={'0' * 64}",
                 404, spec_path=T + "/attachment")
        self.get("GET /v1/cases/stats after", "/v1/cases/stats", 200)

    def t_workbench(self):
        page, _ = self.get("GET /ui", "/ui", 200, token=None)
        self.get("GET /ui/app.js", "/ui/app.js", 200, token=None, spec_path="/ui/{asset}")
        self.get("GET /ui/app.css", "/ui/app.css", 200, token=None, spec_path="/ui/{asset}")
        if page is not None:
            self.get("GET /ui (unchanged)", "/ui", 304, token=None,
                     headers={"If-None-Match": page.headers.get("ETag", "")})
        self.get("GET /ui/nope", "/ui/nope", 404, token=None, spec_path="/ui/{asset}")


def run_live(args, spec, fails):
    return run_server(Live(args, spec, fails), fails) + run_server(
        CasesLive(args, spec, fails), fails)


def run_server(live, fails):
    try:
        if not isinstance(live, CasesLive):
            live.model_add()
        if live.start():
            live.run()
            live.stop()
    finally:
        live.kill()
        if fails.items and live.proc is not None:
            tail = live.stderr_tail()
            if tail:
                fails.add("vigil serve stderr (last lines)", "\n" + tail)
        live.cleanup()
    return live.requests


def stage(name, fn, *args):
    """Runs one step; a crash (say, on a broken spec) is a failure, and the next step runs."""
    fails = args[-1]
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 - reported, never swallowed
        fails.add(name, f"the check crashed: {type(e).__name__}: {e}")
        return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vigil", help="the vigil binary")
    ap.add_argument("--spec", required=True, help="docs/openapi.yaml")
    ap.add_argument("--model", help="a model file (testdata/models/serve_model.json)")
    ap.add_argument("--policy", help="a policy file (policies/default.yaml)")
    ap.add_argument("--fx-rates", help="an FX table (data/fx_rates.csv)")
    ap.add_argument("--cases-policy",
                    help="the cases server's policy (testdata/policies/cases.yaml)")
    ap.add_argument("--spec-only", action="store_true", help="check the spec alone (step 1)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary data directory")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every answer")
    args = ap.parse_args()
    if not args.spec_only:
        missing = [n for n in ("vigil", "model", "policy", "fx_rates", "cases_policy")
                   if not getattr(args, n)]
        if missing:
            ap.error("needed unless --spec-only: " +
                     ", ".join("--" + n.replace("_", "-") for n in missing))

    fails = Failures()
    try:
        spec = Spec(args.spec)
    except (OSError, yaml.YAMLError) as e:
        print(f"openapi_check: cannot read {args.spec}: {e}", file=sys.stderr)
        return 1
    examples = stage("the spec", check_spec, spec, fails)
    self_tests = stage("the schema self-tests", run_self_test, spec, fails)
    routes = requests = 0
    if not args.spec_only:
        routes = stage("the routes", check_routes, spec, args.vigil, fails)
        requests = stage("the live server", run_live, args, spec, fails)

    if fails.items:
        print(f"openapi_check: {len(fails.items)} mismatch(es) against {args.spec}:",
              file=sys.stderr)
        for item in fails.items:
            print(f"  - {item}", file=sys.stderr)
        return 1
    summary = (f"openapi_check: OK: {len(spec.operations())} operations, "
               f"{len(spec.doc['components']['schemas'])} schemas, {examples} examples and "
               f"{self_tests} schema self-tests")
    if not args.spec_only:
        summary += f"; {routes} routes served, {requests} live answers conform"
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
