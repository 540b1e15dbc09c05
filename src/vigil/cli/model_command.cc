#include "vigil/cli/model_command.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "vigil/cli/data_files.h"
#include "vigil/cli/model_evaluate_command.h"
#include "vigil/cli/model_train_command.h"
#include "vigil/decision/model_registry.h"
#include "vigil/features/feature_extractor.h"
#include "vigil/model/cpu/predictor.h"
#include "vigil/model/model_file.h"
#include "vigil/model/tree_shap.h"
#include "vigil/training/model_gate.h"

namespace vigil::cli {
namespace {

struct ModelFlags {
  std::string model;
  std::string input;
  std::string out = "-";
  bool shap = false;
  std::string data_dir;
  bool force = false;  // add: a model whose card failed the baseline gate
};

const char* FormatName(ModelFormat f) {
  return f == ModelFormat::kXgboost ? "xgboost" : "lightgbm";
}

const char* LinkName(ModelLink l) {
  switch (l) {
    case ModelLink::kIdentity:
      return "identity";
    case ModelLink::kSigmoid:
      return "sigmoid";
    case ModelLink::kSoftmax:
      return "softmax";
  }
  return "?";
}

int RunInspect(const ModelFlags& flags) {
  auto model = LoadModelFile(flags.model);
  if (!model.ok()) {
    std::cerr << "vigil model inspect: " << model.status().message() << "\n";
    return kExitInputRejected;
  }
  const TreeEnsemble& m = **model;
  size_t leaves = 0;
  std::set<int32_t> used;
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    if (m.is_leaf(i)) {
      ++leaves;
    } else {
      used.insert(m.feature[i]);
    }
  }
  int max_depth = 0;
  double depth_sum = 0;
  for (size_t t = 0; t < m.num_trees(); ++t) {
    max_depth = std::max(max_depth, m.Depth(t));
    depth_sum += m.Depth(t);
  }
  std::vector<std::string> used_names, unused_names;
  for (size_t f = 0; f < m.feature_names.size(); ++f) {
    (used.count(static_cast<int32_t>(f)) ? used_names : unused_names).push_back(m.feature_names[f]);
  }
  std::cout << "model: " << flags.model << "\n"
            << "format: " << FormatName(m.format) << ", objective " << m.objective << ", link "
            << LinkName(m.link) << "\n"
            << "trees: " << m.num_trees() << " (output groups: " << m.num_groups
            << "), nodes: " << m.num_nodes() << " (leaves: " << leaves << ")\n"
            << "depth: max " << max_depth << ", mean "
            << absl::StrFormat("%.2f", depth_sum / static_cast<double>(m.num_trees())) << "\n"
            << "base margin: "
            << absl::StrJoin(m.base_margin, ", ",
                             [](std::string* o, double v) { absl::StrAppend(o, v + 0.0); })
            << "\n"
            << "features: " << m.feature_names.size() << " in the model, " << used_names.size()
            << " used in splits\n"
            << "  used: " << (used_names.empty() ? "none" : absl::StrJoin(used_names, " ")) << "\n";
  if (!unused_names.empty()) std::cout << "  unused: " << absl::StrJoin(unused_names, " ") << "\n";
  const auto schema = FeatureExtractor::Schema();
  const auto bound = BindFeatures(m, *schema);
  if (bound.ok()) {
    std::cout << "feature schema " << schema->version() << ": binds (" << m.feature_names.size()
              << " of its " << schema->size() << " columns feed the model)\n";
  } else {
    std::cout << "feature schema " << schema->version()
              << ": does not bind: " << bound.status().message() << "\n";
  }
  return kExitOk;
}

std::string Number(double v) { return std::isnan(v) ? "" : absl::StrFormat("%.17g", v); }

int RunPredict(const ModelFlags& flags) {
  const auto fail = [](const std::string& message, int code) {
    std::cerr << "vigil model predict: " << message << "\n";
    return code;
  };
  auto model = LoadModelFile(flags.model);
  if (!model.ok()) return fail(std::string(model.status().message()), kExitInputRejected);
  std::ifstream in(flags.input, std::ios::binary);
  if (!in)
    return fail(absl::StrCat("cannot open '", flags.input, "': ", std::strerror(errno)),
                kExitUsage);
  std::string line;
  if (!std::getline(in, line))
    return fail(absl::StrCat(flags.input, ": empty file, expected a header"), kExitInputRejected);
  std::vector<std::string> header = absl::StrSplit(absl::StripTrailingAsciiWhitespace(line), ',');
  const std::string what = absl::StrCat("the header of ", flags.input);
  auto predictor = CpuPredictor::Create(*model, header, what);
  if (!predictor.ok()) return fail(std::string(predictor.status().message()), kExitInputRejected);
  std::unique_ptr<TreeShapExplainer> shap;
  if (flags.shap) {
    auto e = TreeShapExplainer::Create(*model, header, what);
    if (!e.ok()) return fail(std::string(e.status().message()), kExitInputRejected);
    shap = std::make_unique<TreeShapExplainer>(*std::move(e));
  }

  std::ofstream file;
  std::ostream* out = &std::cout;
  if (flags.out != "-") {
    file.open(flags.out, std::ios::binary | std::ios::trunc);
    if (!file)
      return fail(absl::StrCat("cannot open '", flags.out, "' for writing: ", std::strerror(errno)),
                  kExitUsage);
    out = &file;
  }
  const TreeEnsemble& m = **model;
  const auto groups = static_cast<size_t>(m.num_groups);
  const auto suffix = [&](size_t g) { return groups == 1 ? std::string() : absl::StrCat("_", g); };
  std::vector<std::string> columns;
  for (size_t g = 0; g < groups; ++g) columns.push_back("margin" + suffix(g));
  for (size_t g = 0; g < groups; ++g) columns.push_back("probability" + suffix(g));
  if (shap) {
    for (size_t g = 0; g < groups; ++g) {
      for (const std::string& f : m.feature_names) columns.push_back(f + suffix(g));
      columns.push_back("bias" + suffix(g));
    }
  }
  *out << absl::StrJoin(columns, ",") << "\n";

  // Only the columns the model reads are parsed; others (ids, labels) may hold anything.
  std::vector<uint8_t> used(header.size(), 0);
  for (uint32_t c : predictor->column_of_feature()) used[c] = 1;
  std::vector<double> row(header.size(), std::nan("")), margins(groups), probs(groups);
  std::vector<double> phi(shap ? shap->output_size() : 0);
  std::string text;
  int64_t line_no = 1, rows = 0;
  while (std::getline(in, line)) {
    ++line_no;
    const absl::string_view stripped = absl::StripTrailingAsciiWhitespace(line);
    if (stripped.empty()) continue;
    size_t c = 0;
    for (absl::string_view cell : absl::StrSplit(stripped, ',')) {
      if (c == header.size()) {
        return fail(absl::StrCat(flags.input, ":", line_no, ": more cells than the header's ",
                                 header.size(), " columns"),
                    kExitInputRejected);
      }
      double v = std::nan("");
      if (used[c] && !cell.empty() && cell != "nan" && cell != "NaN" &&
          !absl::SimpleAtod(cell, &v)) {
        return fail(absl::StrCat(flags.input, ":", line_no, ": column '", header[c], "': '", cell,
                                 "' is not a number (leave the cell empty for a missing value)"),
                    kExitInputRejected);
      }
      row[c++] = v;
    }
    if (c != header.size()) {
      return fail(absl::StrCat(flags.input, ":", line_no, ": ", c, " cells, the header has ",
                               header.size()),
                  kExitInputRejected);
    }
    predictor->Margins(row, absl::MakeSpan(margins));
    predictor->Transform(margins, absl::MakeSpan(probs));
    text.clear();
    for (double v : margins) absl::StrAppend(&text, text.empty() ? "" : ",", Number(v));
    for (double v : probs) absl::StrAppend(&text, ",", Number(v));
    if (shap) {
      shap->Explain(row, absl::MakeSpan(phi));
      for (double v : phi) absl::StrAppend(&text, ",", Number(v));
    }
    *out << text << "\n";
    ++rows;
  }
  out->flush();
  if (!*out) return fail("writing the output failed", kExitUsage);
  std::cerr << "vigil model predict: " << rows << " rows scored\n";
  return kExitOk;
}

// `vigil model add`: stores a model in the data dir's registry (what /v1/engine/activate names).
int RunAdd(const ModelFlags& flags) {
  absl::StatusOr<std::optional<training::ModelGate>> gate = training::ReadModelGate(flags.model);
  if (!gate.ok()) {
    std::cerr << "vigil model add: " << gate.status().message() << "\n";
    return kExitInputRejected;
  }
  if (gate->has_value() && !(*gate)->passed) {
    if (!flags.force) {
      std::cerr << "vigil model add: refused: the model failed its baseline gate ("
                << (*gate)->card_path << "): " << (*gate)->reason
                << "\n  (add it anyway, after review, with --force)\n";
      return kExitInputRejected;
    }
    std::cerr << "vigil model add: WARNING: adding a model that failed its baseline gate ("
              << (*gate)->card_path << "), as --force asks: " << (*gate)->reason << "\n";
  }
  absl::StatusOr<ModelRegistry> registry =
      ModelRegistry::Open(absl::StrCat(flags.data_dir, "/models"));
  if (!registry.ok()) {
    std::cerr << "vigil model add: " << registry.status().message() << "\n";
    return kExitUsage;
  }
  absl::StatusOr<ModelRegistry::Entry> entry = registry->Add(flags.model);
  if (!entry.ok()) {
    std::cerr << "vigil model add: " << entry.status().message() << "\n";
    return entry.status().code() == absl::StatusCode::kInvalidArgument ? kExitInputRejected
                                                                        : kExitUsage;
  }
  std::cout << entry->ref << "  " << entry->path << "\n";
  return kExitOk;
}

int RunList(const ModelFlags& flags) {
  absl::StatusOr<ModelRegistry> registry =
      ModelRegistry::Open(absl::StrCat(flags.data_dir, "/models"));
  absl::StatusOr<std::vector<ModelRegistry::Entry>> entries =
      registry.ok() ? registry->List()
                    : absl::StatusOr<std::vector<ModelRegistry::Entry>>(registry.status());
  if (!entries.ok()) {
    std::cerr << "vigil model list: " << entries.status().message() << "\n";
    return kExitUsage;
  }
  for (const ModelRegistry::Entry& e : *entries) {
    std::cout << e.ref << "  " << e.bytes << " bytes  " << e.path << "\n";
  }
  return kExitOk;
}

}  // namespace

Command AddModelCommand(CLI::App& vigil) {
  auto flags = std::make_shared<ModelFlags>();
  CLI::App* app = vigil.add_subcommand(
      "model",
      "Inspect a tree-ensemble model (XGBoost JSON or LightGBM text), score a CSV with it, or "
      "train one on labelled history");
  app->require_subcommand(1);
  CLI::App* inspect = app->add_subcommand(
      "inspect",
      "Trees, depth, features used, and whether the model binds to the engine's feature schema");
  inspect->add_option("MODEL", flags->model, "Model file")->required();
  inspect->footer("Example:\n  vigil model inspect model.json");
  CLI::App* predict = app->add_subcommand(
      "predict",
      "Score every row of a CSV whose header names the model's features (empty cell = missing); "
      "prints margin and probability per row, and with --shap one SHAP column per feature plus "
      "bias");
  predict->add_option("MODEL", flags->model, "Model file")->required();
  predict->add_option("FILE", flags->input, "CSV with a header of feature names")->required();
  predict->add_flag("--shap", flags->shap, "Add exact TreeSHAP contributions (margin units)");
  predict->add_option("--out", flags->out, "Output CSV ('-' for standard output)")
      ->capture_default_str();
  predict->footer(
      "Example:\n"
      "  vigil model predict model.json rows.csv --shap --out scores.csv\n"
      "    the model binds to rows.csv's header by name; extra columns are ignored.");
  CLI::App* add = app->add_subcommand(
      "add", "Store a model in a data dir's registry, named by the SHA-256 of its bytes (checked "
             "to load first); prints the ref that `vigil serve --model-ref` and POST "
             "/v1/engine/activate take");
  AddDataDirOption(add, &flags->data_dir, DataDirUse::kMayCreate);
  add->add_option("MODEL", flags->model, "Model file")->required();
  add->add_flag("--force", flags->force,
                "Add a model whose model_card.json (beside it) records a failed baseline gate");
  add->footer(
      "Example:\n  vigil model add --data-dir state/ challenger.json\n"
      "A model whose model_card.json beside it says it did not beat its one-feature baselines "
      "(vigil model train's gate) is refused unless --force.");
  CLI::App* list = app->add_subcommand("list", "The models in a data dir's registry");
  AddDataDirOption(list, &flags->data_dir, DataDirUse::kExisting);
  auto train_flags = std::make_shared<ModelTrainFlags>();
  CLI::App* train = app->add_subcommand(
      "train",
      "Train a model on a labelled history of feature rows, split by event time; writes the "
      "model, its thresholds and a model card with test metrics beside one-feature baselines");
  AddModelTrainOptions(*train, *train_flags);
  auto evaluate_flags = std::make_shared<ModelEvaluateFlags>();
  CLI::App* evaluate = app->add_subcommand(
      "evaluate",
      "A model's figures on labelled feature rows: PR-AUC with an interval, the confusion at "
      "its threshold, precision at k, per amount band and per typology");
  AddModelEvaluateOptions(*evaluate, *evaluate_flags);
  return Command{app, [flags, inspect, predict, add, list, train, train_flags, evaluate,
                       evaluate_flags] {
                   if (train->parsed()) return RunModelTrain(*train_flags);
                   if (evaluate->parsed()) return RunModelEvaluate(*evaluate_flags);
                   if (inspect->parsed()) return RunInspect(*flags);
                   if (predict->parsed()) return RunPredict(*flags);
                   if (add->parsed()) return RunAdd(*flags);
                   if (list->parsed()) return RunList(*flags);
                   return kExitUsage;
                 }};
}

}  // namespace vigil::cli
