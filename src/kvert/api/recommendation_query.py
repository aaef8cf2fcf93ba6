"""The names of kvert's RecommendationQuery API (``autoscaling.kvert.io/v1``): the API
server serves the type, the VPA recommender answers it (:mod:`kvert.vpa.query`)."""

GROUP = "autoscaling.kvert.io"
VERSION = "v1"
API_VERSION = f"{GROUP}/{VERSION}"
KIND = "RecommendationQuery"
PLURAL = "recommendationqueries"
RESOURCE = f"{GROUP}/{PLURAL}"
