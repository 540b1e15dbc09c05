# openapi_check: `vigil serve` against its contract, docs/openapi.yaml. tools/openapi_check.py
# checks the spec, compares `vigil serve --routes` with the spec's operations, then starts the
# server on a free port over a fresh data directory, sends real requests and validates every
# answer (status, headers, content type, body) against the spec. Needs Debian's python3-yaml
# and python3-jsonschema, and the openssl command (the key that seals the audit records).
#
# Included from src/vigil/server/CMakeLists.txt. The vigil target is defined later (src/vigil/cli);
# $<TARGET_FILE:vigil> is resolved at generate time, so the order does not matter.
if(VIGIL_BUILD_TESTS)
  add_test(NAME openapi_check
           COMMAND /usr/bin/python3 "${PROJECT_SOURCE_DIR}/tools/openapi_check.py"
                   --vigil "$<TARGET_FILE:vigil>"
                   --spec "${PROJECT_SOURCE_DIR}/docs/openapi.yaml"
                   --model "${PROJECT_SOURCE_DIR}/testdata/models/serve_model.json"
                   --policy "${PROJECT_SOURCE_DIR}/policies/default.yaml"
                   --fx-rates "${PROJECT_SOURCE_DIR}/data/fx_rates.csv"
                   --cases-policy "${PROJECT_SOURCE_DIR}/testdata/policies/cases.yaml")
  set_tests_properties(openapi_check PROPERTIES TIMEOUT 120)
endif()
