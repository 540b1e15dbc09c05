# The analysts' workbench (docs/workbench.md): web/ bundled with esbuild from the npm packages
# its lock file pins (npm ci, into the build directory: the source tree stays clean), then
# embedded in the server library. Node 18 (Debian 12's nodejs) or later; scripts/setup installs
# it with npm when missing.
find_program(VIGIL_NODE NAMES node nodejs REQUIRED)
find_program(VIGIL_NPM npm REQUIRED)
find_package(Python3 REQUIRED COMPONENTS Interpreter)

set(VIGIL_WEB_SRC "${PROJECT_SOURCE_DIR}/web")
set(VIGIL_WEB_OUT "${PROJECT_BINARY_DIR}/web")
file(GLOB_RECURSE VIGIL_WEB_SOURCES CONFIGURE_DEPENDS "${VIGIL_WEB_SRC}/src/*")

add_custom_command(
  OUTPUT "${VIGIL_WEB_OUT}/node_modules/.package-lock.json"
  COMMAND ${CMAKE_COMMAND} -E make_directory "${VIGIL_WEB_OUT}"
  COMMAND ${CMAKE_COMMAND} -E copy "${VIGIL_WEB_SRC}/package.json"
          "${VIGIL_WEB_SRC}/package-lock.json" "${VIGIL_WEB_OUT}/"
  COMMAND ${VIGIL_NPM} ci --ignore-scripts --no-audit --no-fund --loglevel=error
  WORKING_DIRECTORY "${VIGIL_WEB_OUT}"
  DEPENDS "${VIGIL_WEB_SRC}/package.json" "${VIGIL_WEB_SRC}/package-lock.json"
  COMMENT "npm ci: the workbench's packages (web/package-lock.json)"
  VERBATIM)

add_custom_command(
  OUTPUT "${VIGIL_WEB_OUT}/dist/app.js" "${VIGIL_WEB_OUT}/dist/app.css"
  COMMAND ${CMAKE_COMMAND} -E env "NODE_PATH=${VIGIL_WEB_OUT}/node_modules"
          ${VIGIL_NODE} "${VIGIL_WEB_OUT}/node_modules/esbuild/bin/esbuild"
          "${VIGIL_WEB_SRC}/src/main.js" --bundle --format=esm --minify
          --target=es2020 --log-level=warning --outfile=${VIGIL_WEB_OUT}/dist/app.js
  DEPENDS "${VIGIL_WEB_OUT}/node_modules/.package-lock.json" ${VIGIL_WEB_SOURCES}
  COMMENT "esbuild: the workbench's script and style sheet"
  VERBATIM)

add_custom_command(
  OUTPUT "${VIGIL_WEB_OUT}/workbench_assets.cc"
  COMMAND ${Python3_EXECUTABLE} "${PROJECT_SOURCE_DIR}/tools/embed_assets.py"
          --out "${VIGIL_WEB_OUT}/workbench_assets.cc"
          "index.html=${VIGIL_WEB_SRC}/index.html"
          "app.js=${VIGIL_WEB_OUT}/dist/app.js"
          "app.css=${VIGIL_WEB_OUT}/dist/app.css"
  DEPENDS "${PROJECT_SOURCE_DIR}/tools/embed_assets.py" "${VIGIL_WEB_SRC}/index.html"
          "${VIGIL_WEB_OUT}/dist/app.js" "${VIGIL_WEB_OUT}/dist/app.css"
  COMMENT "embedding the workbench"
  VERBATIM)

target_sources(vigil_server PRIVATE "${VIGIL_WEB_OUT}/workbench_assets.cc")

# The workbench in a real browser: Debian's Chromium, headless, driven by chromedriver through
# python3-selenium (tools/workbench_browser_test.py) against `vigil serve` on loopback.
if(VIGIL_BUILD_TESTS)
  add_test(NAME workbench_browser_test
           COMMAND /usr/bin/python3 "${PROJECT_SOURCE_DIR}/tools/workbench_browser_test.py"
                   --vigil "$<TARGET_FILE:vigil>"
                   --model "${PROJECT_SOURCE_DIR}/testdata/models/serve_model.json"
                   --fx-rates "${PROJECT_SOURCE_DIR}/data/fx_rates.csv"
                   --policy "${PROJECT_SOURCE_DIR}/testdata/policies/cases.yaml")
  set_tests_properties(workbench_browser_test PROPERTIES TIMEOUT 180 LABELS process)
endif()
