"""
Private kernel SVM decision boundaries against the non-private one
==================================================================

Two concentric circles cannot be separated by a line. A linear SVM in a
random Fourier feature space (Rubinstein et al. (2012), Eq. 6) approximates an RBF-kernel SVM
and separates them; :class:`~skdp.svm.PrivateSVMRFF` releases that SVM with
differential privacy (Rubinstein et al. (2012), Alg. 3) by adding calibrated noise to its
weights. The figure shows the decision boundary (score 0) of

* the non-private SVM on the same random features (``LinearSVC``),
* ``PrivateSVMRFF`` with Laplace noise (pure epsilon-DP) and with Gaussian
  noise ((epsilon, delta)-DP, much less noise for 2 x 100 coefficients),
* Chaudhuri et al.'s (2011) alternative, objective perturbation in the random feature space
  (``RandomFourierFeatures`` + ``ObjectivePerturbationClassifier`` in a Pipeline),
* the private *linear* SVM on the raw coordinates, which cannot bend.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC

from skdp.datasets import make_concentric_spheres
from skdp.kernel_approximation import RandomFourierFeatures
from skdp.linear_model import ObjectivePerturbationClassifier
from skdp.svm import PrivateLinearSVM, PrivateSVMRFF

EPSILON, DELTA = 1.0, 1e-6
GAMMA, C, N_COMPONENTS = 2.0, 100.0, 100
SEED = 0  # fixed for a reproducible figure; real releases use random_state=None
LABELS = [0, 1]  # the public label set (reading it from y would be a small leak)

X, y = make_concentric_spheres(4000, n_features=2, noise=0.1, random_state=SEED)
X_train, y_train, X_test, y_test = X[:3000], y[:3000], X[3000:], y[3000:]
n = len(y_train)

rff = RandomFourierFeatures(gamma=GAMMA, n_components=N_COMPONENTS, random_state=SEED)
models = {
    "non-private RFF + LinearSVC": make_pipeline(
        rff, LinearSVC(loss="hinge", C=C / n, fit_intercept=False)),
    f"PrivateSVMRFF, Laplace, eps={EPSILON:g}": PrivateSVMRFF(
        epsilon=EPSILON, gamma=GAMMA, C=C, n_components=N_COMPONENTS, classes=LABELS,
        random_state=SEED),
    f"PrivateSVMRFF, Gaussian, eps={EPSILON:g}": PrivateSVMRFF(
        epsilon=EPSILON, delta=DELTA, mechanism="gaussian", gamma=GAMMA, C=C,
        n_components=N_COMPONENTS, classes=LABELS, random_state=SEED),
    f"RFF + objective perturbation, eps={EPSILON:g}": make_pipeline(
        rff, ObjectivePerturbationClassifier(epsilon=EPSILON, loss="huber", data_norm=1.0,
                                             alpha=1.0 / C, fit_intercept=False,
                                             classes=LABELS, random_state=SEED)),
    f"PrivateLinearSVM (raw x), eps={EPSILON:g}": PrivateLinearSVM(
        epsilon=EPSILON, data_norm=2.0, C=C, classes=LABELS, random_state=SEED),
}

grid = np.linspace(-1.5, 1.5, 200)
xx, yy = np.meshgrid(grid, grid)
points = np.column_stack([xx.ravel(), yy.ravel()])

fig, axes = plt.subplots(1, len(models), figsize=(3.6 * len(models), 4.2), sharey=True,
                         layout="constrained")
for ax, (name, model) in zip(axes, models.items()):
    model.fit(X_train, y_train)
    scores = model.decision_function(points).reshape(xx.shape)
    ax.contourf(xx, yy, scores > 0, levels=[-0.5, 0.5, 1.5], colors=["#c6dbef", "#f4d6c6"])
    ax.contour(xx, yy, scores, levels=[0.0], colors="k", linewidths=1.5)
    ax.scatter(X_test[:300, 0], X_test[:300, 1], c=y_test[:300], cmap="coolwarm", s=6)
    ax.set_title(f"{name}\ntest accuracy {model.score(X_test, y_test):.3f}", fontsize=9)
    ax.set_aspect("equal")
plt.show()
