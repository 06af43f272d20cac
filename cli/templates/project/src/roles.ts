// The application's roles. Admin sits inside Editor, so an Admin passes Editor
// checks; SuperAdmin may manage the roles themselves (the kit's adminRole).
export const ADMIN = 'Admin'
export const EDITOR = 'Editor'
export const SUPER_ADMIN = 'SuperAdmin'

export const STAFF = [ADMIN, EDITOR]
