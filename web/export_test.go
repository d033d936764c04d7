package web

// PictureName names a unit's picture, for the tests that ask for one they have not
// been told of (a unit the delay still holds).
var PictureName = pictureName
