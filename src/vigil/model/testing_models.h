// Small models written by hand from each format's documentation, shared by the model tests.
// Expected outputs are worked out in the tests' comments.
#ifndef VIGIL_MODEL_TESTING_MODELS_H_
#define VIGIL_MODEL_TESTING_MODELS_H_

namespace vigil::testing {

// Two features a, b; binary:logistic, base_score 0.5 (base margin 0).
// Tree 0: a < 1.5 (missing: left) ? 0.25 : (b < -0.5 (missing: right) ? -0.125 : 0.5).
// Tree 1: a single leaf, 0.0625.
inline constexpr char kXgboostTwoTrees[] = R"({
  "learner": {
    "attributes": {},
    "feature_names": ["a", "b"],
    "feature_types": ["float", "float"],
    "gradient_booster": {
      "model": {
        "gbtree_model_param": {"num_parallel_tree": "1", "num_trees": "2", "size_leaf_vector": "0"},
        "tree_info": [0, 0],
        "trees": [
          {"base_weights": [0, 0.25, 0, -0.125, 0.5], "categories": [], "categories_nodes": [],
           "categories_segments": [], "categories_sizes": [], "default_left": [1, 0, 0, 0, 0],
           "id": 0, "left_children": [1, -1, 3, -1, -1], "loss_changes": [1, 0, 1, 0, 0],
           "parents": [2147483647, 0, 0, 2, 2], "right_children": [2, -1, 4, -1, -1],
           "split_conditions": [1.5, 0.25, -0.5, -0.125, 0.5], "split_indices": [0, 0, 1, 0, 0],
           "split_type": [0, 0, 0, 0, 0], "sum_hessian": [20, 10, 10, 5, 5],
           "tree_param": {"num_deleted": "0", "num_feature": "2", "num_nodes": "5", "size_leaf_vector": "0"}},
          {"base_weights": [0.0625], "categories": [], "categories_nodes": [],
           "categories_segments": [], "categories_sizes": [], "default_left": [0], "id": 1,
           "left_children": [-1], "loss_changes": [0], "parents": [2147483647],
           "right_children": [-1], "split_conditions": [0.0625], "split_indices": [0],
           "split_type": [0], "sum_hessian": [20],
           "tree_param": {"num_deleted": "0", "num_feature": "2", "num_nodes": "1", "size_leaf_vector": "0"}}
        ]
      },
      "name": "gbtree"
    },
    "learner_model_param": {"base_score": "5E-1", "boost_from_average": "1", "num_class": "0", "num_feature": "2", "num_target": "1"},
    "objective": {"name": "binary:logistic", "reg_loss_param": {"scale_pos_weight": "1"}}
  },
  "version": [1, 7, 4]
})";

// Two features a, b; objective binary with sigmoid:2; three trees.
// Tree 0: a <= 1.5 (missing type None: NaN reads as 0; default left) ? 0.25
//         : (b <= -0.5 (missing type NaN, default right) ? -0.125 : 0.5).
// Tree 1: a single leaf, 0.0625.
// Tree 2: b <= 5 (missing type Zero, default right) ? 1 : 2.
inline constexpr char kLightGbmThreeTrees[] = R"(tree
version=v3
num_class=1
num_tree_per_iteration=1
label_index=0
max_feature_idx=1
objective=binary sigmoid:2
feature_names=a b
feature_infos=[-10:10] [-10:10]
tree_sizes=400 200 300

Tree=0
num_leaves=3
num_cat=0
split_feature=0 1
split_gain=1 1
threshold=1.5 -0.5
decision_type=2 8
left_child=-1 -2
right_child=1 -3
leaf_value=0.25 -0.125 0.5
leaf_weight=10 5 5
leaf_count=10 5 5
internal_value=0 0
internal_weight=20 10
internal_count=20 10
is_linear=0
shrinkage=1


Tree=1
num_leaves=1
num_cat=0
split_feature=
split_gain=
threshold=
decision_type=
left_child=
right_child=
leaf_value=0.0625
leaf_weight=
leaf_count=
internal_value=
internal_weight=
internal_count=
is_linear=0
shrinkage=1


Tree=2
num_leaves=2
num_cat=0
split_feature=1
split_gain=1
threshold=5
decision_type=4
left_child=-1
right_child=-2
leaf_value=1 2
leaf_weight=10 10
leaf_count=10 10
internal_value=0
internal_weight=20
internal_count=20
is_linear=0
shrinkage=1


end of trees

feature_importances:
a=1
b=2

parameters:
[boosting: gbdt]
end of parameters
)";

}  // namespace vigil::testing

#endif  // VIGIL_MODEL_TESTING_MODELS_H_
