#include "vigil/cases/suspicion_report.h"

#include <cstdlib>
#include <sstream>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "pugixml.hpp"
#include "vigil/common/html_escape.h"
#include "vigil/common/string_view.h"
#include "vigil/core/decision.h"

namespace vigil::cases {
namespace {

absl::Status CheckSuspicious(const SuspicionReportInput& in) {
  if (in.c == nullptr || !in.c->closed() || in.c->outcome != CaseOutcome::kSuspiciousReported) {
    return absl::FailedPreconditionError(
        absl::StrCat("case ", in.c == nullptr ? std::string("?") : in.c->id,
                     ": a report is drafted for a case closed as suspicious_reported only"));
  }
  return absl::OkStatus();
}

// goAML's date-time: local to the report, no zone; vigil writes UTC and says so in the header.
std::string GoamlTime(UtcTime t) { return FormatUtc(t).substr(0, 19); }

std::string Micros(int64_t micros) {
  const int64_t cents = (micros + (micros >= 0 ? 5'000 : -5'000)) / 10'000;
  return absl::StrFormat("%s%d.%02d", cents < 0 ? "-" : "", std::llabs(cents) / 100,
                         std::llabs(cents) % 100);
}

// Why vigil alerted: the decision's rule hits, screening hits and score, one line.
std::string Why(const Decision& d) {
  std::vector<std::string> parts;
  for (const Reason& r : d.reasons) {
    if (r.shadow || r.kind == Reason::Kind::kModel) continue;
    parts.push_back(r.text.empty() ? r.code : absl::StrCat(r.code, ": ", r.text));
  }
  if (!std::isnan(d.score)) parts.push_back(absl::StrFormat("model score %.4f", d.score));
  return absl::StrCat(ActionName(d.action), " by vigil (", d.policy_version,
                      d.model_version.empty() ? "" : absl::StrCat(", ", d.model_version),
                      "): ", absl::StrJoin(parts, "; "));
}

void Text(pugi::xml_node parent, const char* name, std::string_view value) {
  if (value.empty()) return;
  parent.append_child(name).text().set(std::string(value).c_str());
}

void Account(pugi::xml_node parent, const char* name, const Party& p, std::string_view currency) {
  pugi::xml_node a = parent.append_child(name);
  Text(a, "swift", p.bank_id);
  Text(a, "account", p.account_id.empty() ? "unknown" : p.account_id);
  Text(a, "currency_code", currency);
  Text(a, "account_name", p.name);
}

}  // namespace

absl::StatusOr<std::string> GoamlReportXml(const SuspicionReportInput& in) {
  if (absl::Status s = CheckSuspicious(in); !s.ok()) return s;
  const Case& c = *in.c;
  pugi::xml_document doc;
  pugi::xml_node decl = doc.append_child(pugi::node_declaration);
  decl.append_attribute("version") = "1.0";
  decl.append_attribute("encoding") = "UTF-8";
  doc.append_child(pugi::node_comment)
      .set_value(absl::StrCat(" goAML report draft by vigil for ", c.id,
                              "; times are UTC; complete the FIU's code lists (funds, transmode, "
                              "indicators) and the reporting person before submitting ")
                     .c_str());
  pugi::xml_node report = doc.append_child("report");
  Text(report, "rentity_id", in.entity.rentity_id.empty() ? "0" : in.entity.rentity_id);
  Text(report, "rentity_branch", in.entity.rentity_branch);
  Text(report, "submission_code", "E");
  Text(report, "report_code", "STR");
  Text(report, "entity_reference", c.id);
  Text(report, "submission_date", GoamlTime(in.now));
  Text(report, "currency_code_local", in.entity.currency_local);
  Text(report, "reason", c.rationale);
  Text(report, "action",
       absl::StrCat("Case ", c.id, " closed as suspicious by ", c.closed_by,
                    c.approved_by.empty() ? "" : absl::StrCat(", approved by ", c.approved_by),
                    "; ", c.blocks, " of ", c.alerts, " payments held (BLOCK)"));
  for (size_t i = 0; i < in.records.size(); ++i) {
    const audit::AuditRecord& r = in.records[i];
    const Transaction& tx = r.transaction;
    pugi::xml_node t = report.append_child("transaction");
    Text(t, "transactionnumber", tx.id);
    Text(t, "internal_ref_number", absl::StrCat("vigil audit record ", r.sequence));
    Text(t, "transaction_description", Why(r.decision));
    Text(t, "date_transaction", GoamlTime(tx.event_time));
    Text(t, "amount_local",
         Micros(i < in.amounts_local_micros.size() ? in.amounts_local_micros[i] : 0));
    pugi::xml_node from = t.append_child("t_from_my_client");
    Account(from, "from_account", tx.originator, tx.amount.currency().code());
    Text(from, "from_country", tx.originator.country);
    pugi::xml_node to = t.append_child("t_to");
    Account(to, "to_account", tx.beneficiary,
            (tx.settled_amount ? *tx.settled_amount : tx.amount).currency().code());
    Text(to, "to_country", tx.beneficiary.country);
  }
  std::ostringstream out;
  doc.save(out, "  ", pugi::format_default, pugi::encoding_utf8);
  return out.str();
}

absl::StatusOr<std::string> SuspicionReportHtml(const SuspicionReportInput& in) {
  if (absl::Status s = CheckSuspicious(in); !s.ok()) return s;
  const Case& c = *in.c;
  std::string h = absl::StrCat(
      "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Suspicious "
      "transaction report draft: ",
      HtmlEscape(c.id),
      "</title><style>body{font:14px/1.45 system-ui,sans-serif;max-width:60em;margin:2em auto}"
      "table{border-collapse:collapse;width:100%}td,th{border:1px solid #999;padding:3px 6px;"
      "text-align:left;vertical-align:top}td.num{text-align:right}</style></head><body>\n"
      "<h1>Suspicious transaction report (draft)</h1>\n<p>Case <strong>",
      HtmlEscape(c.id), "</strong>, drafted ", HtmlEscape(FormatUtc(in.now)),
      " by vigil. Reporting entity ",
      HtmlEscape(in.entity.rentity_id.empty() ? "(to fill in)" : in.entity.rentity_id),
      ". Amounts in ", HtmlEscape(in.entity.currency_local),
      ".</p>\n<h2>Subject</h2>\n<p>Account <code>", HtmlEscape(c.subject), "</code>",
      c.subject_name.empty() ? "" : absl::StrCat(" (", HtmlEscape(c.subject_name), ")"), ": ",
      c.alerts, " alerted payments from ", HtmlEscape(FormatUtc(c.first_payment)), " to ",
      HtmlEscape(FormatUtc(c.last_payment)), ", ", Micros(c.amount_reporting_micros), " ",
      HtmlEscape(in.entity.currency_local), ".</p>\n<h2>Narrative</h2>\n<p>",
      HtmlEscape(c.rationale), "</p>\n<p>Closed as suspicious by ", HtmlEscape(c.closed_by),
      c.approved_by.empty() ? "" : absl::StrCat(", approved by ", HtmlEscape(c.approved_by)),
      " at ", HtmlEscape(FormatUtc(c.closed_at)),
      ".</p>\n<h2>Transactions</h2>\n<table><thead><tr><th>id</th>"
      "<th>time (UTC)</th><th>from</th><th>to</th><th>amount</th><th>in ",
      HtmlEscape(in.entity.currency_local),
      "</th><th>why vigil alerted</th><th>audit record</th></tr>"
      "</thead><tbody>\n");
  for (size_t i = 0; i < in.records.size(); ++i) {
    const audit::AuditRecord& r = in.records[i];
    const Transaction& tx = r.transaction;
    const auto party = [](const Party& p) {
      return absl::StrCat("<code>", HtmlEscape(p.account_id), "</code>",
                          p.name.empty() ? "" : absl::StrCat("<br>", HtmlEscape(p.name)),
                          p.bank_id.empty() ? "" : absl::StrCat("<br>bank ", HtmlEscape(p.bank_id)),
                          p.country.empty() ? "" : absl::StrCat(" (", HtmlEscape(p.country), ")"));
    };
    absl::StrAppend(
        &h, "<tr><td>", HtmlEscape(tx.id), "</td><td>", HtmlEscape(FormatUtc(tx.event_time)),
        "</td><td>", party(tx.originator), "</td><td>", party(tx.beneficiary),
        "</td><td class=\"num\">", HtmlEscape(tx.amount.ToDecimalString()), " ",
        HtmlEscape(tx.amount.currency().code()), "</td><td class=\"num\">",
        Micros(i < in.amounts_local_micros.size() ? in.amounts_local_micros[i] : 0), "</td><td>",
        HtmlEscape(Why(r.decision)), "</td><td>", r.sequence, "</td></tr>\n");
  }
  absl::StrAppend(&h, "</tbody></table>\n<h2>Timeline</h2>\n<ol>\n");
  for (const CaseEvent& e : in.timeline) {
    absl::StrAppend(&h, "<li>", HtmlEscape(FormatUtc(e.at)), " ",
                    HtmlEscape(CaseEventKindName(e.kind)), " by ", HtmlEscape(e.actor),
                    e.text.empty() ? "" : absl::StrCat(": ", HtmlEscape(e.text)), "</li>\n");
  }
  absl::StrAppend(
      &h,
      "</ol>\n<p>Each transaction's decision is in vigil's signed decision log under "
      "its audit record; <code>vigil audit prove</code> proves it.</p>\n</body></html>\n");
  return h;
}

}  // namespace vigil::cases
