from django.urls import include, path
from rest_framework.routers import DefaultRouter

from roleplay.api import views

router = DefaultRouter(trailing_slash="/?")
router.register("model-configs", views.ModelConfigViewSet, basename="modelconfig")
router.register("characters", views.CharacterViewSet, basename="character")
router.register("players", views.PlayerViewSet, basename="player")
router.register("conversations", views.ConversationViewSet, basename="conversation")

urlpatterns = [path("", include(router.urls))]
