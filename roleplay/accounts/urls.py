from django.urls import path

from console.ratelimit import limited
from roleplay.accounts.views import app, console, oidc

urlpatterns = [
    path("app/login/", app.sign_in, name="app_login"),
    path("app/logout/", app.sign_out, name="app_logout"),
    path("app/signup/", limited("signup_address")(app.sign_up), name="app_signup"),
    path(
        "app/invite/<str:token>/",
        limited("signup_address")(app.sign_up_invited),
        name="app_signup_invited",
    ),
    # Sign-on through the OpenID Connect provider: the names are allauth's, which reverses them.
    path("app/oidc/<str:provider_id>/login/", oidc.begin, name="openid_connect_login"),
    path(
        "app/oidc/<str:provider_id>/login/callback/",
        oidc.callback,
        name="openid_connect_callback",
    ),
    path("app/verify/", app.verify_pending, name="app_verify_pending"),
    path("app/verify/<str:token>/", app.verify, name="app_verify"),
    path("app/reset/", app.ResetView.as_view(), name="app_reset"),
    path("app/reset/sent/", app.ResetSentView.as_view(), name="app_reset_sent"),
    path(
        "app/reset/<uidb64>/<token>/",
        app.ResetConfirmView.as_view(),
        name="app_reset_confirm",
    ),
    path("app/reset/done/", app.ResetCompleteView.as_view(), name="app_reset_complete"),
    path("app/account/", app.account, name="app_account"),
    path(
        "app/account/devices/<uuid:device_id>/revoke/", app.device_revoke, name="app_device_revoke"
    ),
    path("app/account/age/", app.confirm_age, name="app_confirm_age"),
    path("app/account/export/", app.export, name="app_export"),
    path("app/account/delete/", app.delete, name="app_delete"),
    path("console/player-app/", console.player_app, name="player_app"),
    path("console/player-app/settings/", console.player_app_settings, name="player_app_settings"),
    path("console/player-app/invites/", console.invite_create, name="player_app_invite"),
    path(
        "console/player-app/invites/<uuid:pk>/revoke/",
        console.invite_revoke,
        name="player_app_invite_revoke",
    ),
    path("console/player-app/accounts/", console.account_create, name="player_app_account"),
    path("console/mail/", console.outgoing_mail, name="outgoing_mail"),
]
