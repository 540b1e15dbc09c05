// CaseApi: the /v1/cases routes (docs/openapi.yaml, docs/cases.md) without the transport: the
// analysts' queue, a case with its alerts and timeline, and the actions on it, answered from
// a cases::CaseBook. Who is acting comes from the caller's credential (ServeApi checks it):
// the actor's name is its token or certificate, its role analyst or supervisor.
//
// Thread safety: as CaseBook (any thread).
#ifndef VIGIL_SERVER_CASE_API_H_
#define VIGIL_SERVER_CASE_API_H_

#include <string_view>

#include "vigil/cases/case_book.h"
#include "vigil/server/http_server.h"

namespace vigil {

enum class CaseRoute {
  kList,        // GET /v1/cases?state=&owner=&queue=&subject=&reason=&min_score=&max_score=
                //   &overdue=&order=&offset=&limit=
  kStats,       // GET /v1/cases/stats: the dashboard's figures (cases::CaseTally)
  kNext,        // POST /v1/cases/next: claim the queue's case of highest priority
  kGet,         // GET /v1/cases/{case_id}: the case, its alerts, its timeline
  kClaim,       // POST /v1/cases/{case_id}/claim
  kRelease,     // .../release
  kAssign,      // .../assign {"assignee"}
  kNote,        // .../note {"text"}
  kEscalate,    // .../escalate {"text"}
  kClose,       // .../close {"outcome", "text"} (awaits a second analyst where four eyes apply)
  kApprove,     // .../approve
  kReject,      // .../reject {"text"}
  kReopen,      // .../reopen {"text"}
  kReviewHit,   // .../screening {"sequence", "hit", "verdict", "expires", "text"}
  kClearances,  // GET /v1/screening/clearances: those holding now
  kAttach,      // POST /v1/cases/{case_id}/attachments?name=&text= (the file as the body)
  kAttachment,  // GET /v1/cases/{case_id}/attachment?sha256=
};

// The answer to "route" on "book" for "actor"; "case_id" is the path's, for the routes that
// have one. Errors as docs/openapi.yaml says: 400 naming the field, 403 for what only a
// supervisor may do, 404 for an unknown case, 409 for what the case's state forbids.
HttpResponse AnswerCaseRoute(cases::CaseBook& book, CaseRoute route, const HttpRequest& request,
                             std::string_view case_id, const cases::CaseActor& actor);

}  // namespace vigil

#endif  // VIGIL_SERVER_CASE_API_H_
