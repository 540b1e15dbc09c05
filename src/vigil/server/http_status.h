// HttpStatusOf: the one place where an error from the modules below the server (an
// absl::Status) becomes the HTTP status the API answers with (docs/serve.md, Errors). Routes
// that answer a condition of their own (a malformed body, a missing token, a refused feature
// row) name their status where they detect it; every answer that carries a module's Status
// goes through here, so the same failure gets the same status on every route.
//
// The table follows the Google API mapping of status codes to HTTP, with two choices of
// vigil's: kResourceExhausted is 503 (overload: retry shortly, with Retry-After), not 429, since
// it is the server that is full, not the caller over a quota; kUnimplemented is 422 (a message
// type vigil reads but does not decide), not 501.
#ifndef VIGIL_SERVER_HTTP_STATUS_H_
#define VIGIL_SERVER_HTTP_STATUS_H_

#include "absl/status/status.h"

namespace vigil {

// REQUIRES: code != kOk.
int HttpStatusOf(absl::StatusCode code);

}  // namespace vigil

#endif  // VIGIL_SERVER_HTTP_STATUS_H_
