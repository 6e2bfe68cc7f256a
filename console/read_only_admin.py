"""Django's admin as a window, not a door.

Every write of the product goes through its app's services (tenancy checks, compare-and-
set, cleanup of rows keyed by id text); an admin form writing rows with the ORM would be a
way around those rules. So the apps register their models with :class:`ReadOnlyAdmin`:
the admin shows what is stored, and changes are made in the console or through the API.
"""

from django.contrib import admin


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
