#include "vigil/server/path_redactor.h"

#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace vigil {
namespace {

using Mode = PathRedactor::Mode;

TEST(PathRedactor, ReplacesConfiguredPathsInEverySpelling) {
  const PathRedactor r({{"/srv/vigil/data/", "<data_dir>"}, {"models/m.json", "<model>"}});
  // As given, without the slash, and inside a longer path.
  EXPECT_EQ(r.Redact("cannot open /srv/vigil/data/000012.log: gone", Mode::kConfiguredPaths),
            "cannot open <data_dir>/000012.log: gone");
  EXPECT_EQ(r.Redact("in /srv/vigil/data", Mode::kConfiguredPaths), "in <data_dir>");
  EXPECT_EQ(r.Redact("'models/m.json': bad", Mode::kConfiguredPaths), "'<model>': bad");
  // Another name that starts alike is left.
  EXPECT_EQ(r.Redact("/srv/vigil/data2/x", Mode::kConfiguredPaths), "/srv/vigil/data2/x");
}

TEST(PathRedactor, ABareWordIsAPathOnlyBeforeASlash) {
  const PathRedactor r(std::vector<std::pair<std::string, std::string>>{{"state/", "<data_dir>"}});
  EXPECT_EQ(r.Redact("loading its model, policy and state", Mode::kConfiguredPaths),
            "loading its model, policy and state");
  EXPECT_EQ(r.Redact("state/models/x.model: no", Mode::kConfiguredPaths),
            "<data_dir>/models/x.model: no");
}

TEST(PathRedactor, AnyAbsolutePathGoesButRoutesAndMediaTypesStay) {
  const PathRedactor r;
  EXPECT_EQ(r.Redact("IO error: /var/lib/x/LOCK: busy", Mode::kAnyPath),
            "IO error: <path>: busy");
  EXPECT_EQ(r.Redact("POST it to /v1/score/batch", Mode::kAnyPath), "POST it to /v1/score/batch");
  EXPECT_EQ(r.Redact("see GET /readyz", Mode::kAnyPath), "see GET /readyz");
  EXPECT_EQ(r.Redact("Content-Type 'text/yaml'", Mode::kAnyPath), "Content-Type 'text/yaml'");
  EXPECT_EQ(r.Redact("\"/tmp/a/b.json\"", Mode::kAnyPath), "\"<path>\"");
  EXPECT_EQ(r.Redact("see docs/openapi.yaml", Mode::kAnyPath), "see docs/openapi.yaml");
  // Configured mode leaves what it was not told.
  EXPECT_EQ(r.Redact("/var/lib/x", Mode::kConfiguredPaths), "/var/lib/x");
}

// A base64 signature that starts with '/' reads as a path to kAnyPath; kConfiguredPaths leaves
// it whole. Why GET /v1/audit/verify, whose body carries signed tree heads, is redacted in the
// configured mode (serve_api.cc): a signature that comes back changed no longer verifies.
TEST(PathRedactor, ASignatureThatLooksLikeAPathStaysWholeInConfiguredMode) {
  const PathRedactor r(
      std::vector<std::pair<std::string, std::string>>{{"/srv/vigil/data", "<data_dir>"}});
  const std::string head = R"({"signature":"/Qx3a+Zk/9bW2fh1kLr0=="})";
  EXPECT_EQ(r.Redact(head, Mode::kAnyPath), R"({"signature":"<path>=="})");
  EXPECT_EQ(r.Redact(head, Mode::kConfiguredPaths), head);
}

}  // namespace
}  // namespace vigil
