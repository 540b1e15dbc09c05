#!/usr/bin/env python3
"""Writes testdata/iso20022/expected_fields.csv: an independent read of the corpus's pacs.008
and pacs.009 messages (Python's xml.etree, namespace-aware), one row per CdtTrfTxInf, which
iso20022_test checks vigil's reader against.

Columns: file, tx_index (1-based), the raw texts of IntrBkSttlmAmt and its Ccy, InstdAmt and its
Ccy (empty when absent), UETR, EndToEndId, and the settlement date (IntrBkSttlmDt of the
transaction, else of the group header). Values are element texts with surrounding whitespace
stripped, nothing else: the mapping to a Transaction is the test's to check.

    python3 tools/iso20022_expected.py            # from the repository root
"""

import csv
import os
import re
import sys
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "testdata", "iso20022")
ISO_NS = "urn:iso:std:iso:20022:tech:xsd:"
SUPPORTED = re.compile(r"^pacs\.00[89]\.001\.(\d\d)$")


def text(element):
    return "" if element is None or element.text is None else element.text.strip()


def split(tag):
    """'{ns}local' -> (ns, local)."""
    if tag.startswith("{"):
        ns, local = tag[1:].split("}", 1)
        return ns, local
    return "", tag


def rows_of(path, relative):
    tree = ET.parse(path)
    documents = [e for e in tree.iter() if split(e.tag)[1] == "Document"]
    assert len(documents) == 1, f"{relative}: {len(documents)} Document elements"
    ns, _ = split(documents[0].tag)
    q = lambda local: f"{{{ns}}}{local}"  # noqa: E731
    root = next(iter(documents[0]))
    group = root.find(q("GrpHdr"))
    group_date = text(group.find(q("IntrBkSttlmDt")))
    for index, tx in enumerate(root.findall(q("CdtTrfTxInf")), start=1):
        settlement = tx.find(q("IntrBkSttlmAmt"))
        instructed = tx.find(q("InstdAmt"))
        payment_id = tx.find(q("PmtId"))
        yield {
            "file": relative,
            "tx_index": index,
            "intrbk_amount": text(settlement),
            "intrbk_ccy": settlement.get("Ccy", ""),
            "instd_amount": text(instructed),
            "instd_ccy": "" if instructed is None else instructed.get("Ccy", ""),
            "uetr": text(payment_id.find(q("UETR"))),
            "end_to_end_id": text(payment_id.find(q("EndToEndId"))),
            "value_date": text(tx.find(q("IntrBkSttlmDt"))) or group_date,
        }


def main():
    with open(os.path.join(CORPUS, "manifest.csv"), newline="", encoding="utf-8") as f:
        manifest = list(csv.DictReader(f))
    rows = []
    for entry in manifest:
        match = SUPPORTED.match(entry["message_definition"])
        if not match or int(match.group(1)) < 7:
            continue
        rows.extend(rows_of(os.path.join(CORPUS, entry["file"]), entry["file"]))
    out = os.path.join(CORPUS, "expected_fields.csv")
    with open(out, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    print(f"{out}: {len(rows)} transactions", file=sys.stderr)


if __name__ == "__main__":
    main()
