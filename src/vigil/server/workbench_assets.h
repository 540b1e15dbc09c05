// WorkbenchAsset: the analysts' workbench (docs/workbench.md) as built into the binary: the
// page, its bundled script and its style sheet, made at build time from web/ (esbuild over the
// npm packages of web/package-lock.json) and embedded by tools/embed_assets.py, so that `vigil
// serve` serves /ui with no file beside it and no JavaScript on the server.
//
// Thread safety: immutable data.
#ifndef VIGIL_SERVER_WORKBENCH_ASSETS_H_
#define VIGIL_SERVER_WORKBENCH_ASSETS_H_

#include <string_view>

namespace vigil {

struct WorkbenchAsset {
  std::string_view name;          // served at /ui/<name>: "index.html", "app.js", "app.css"
  std::string_view content_type;  // with its charset
  std::string_view body;
  std::string_view etag;  // quoted, from the body's SHA-256
};

// The asset of that name, or null.
const WorkbenchAsset* FindWorkbenchAsset(std::string_view name);

}  // namespace vigil

#endif  // VIGIL_SERVER_WORKBENCH_ASSETS_H_
