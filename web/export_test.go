package web

// PictureName names a unit's picture, for the tests that ask for one they have not
// been told of (a unit the delay still holds).
var PictureName = pictureName

// StreamID names a stream's life, for the tests that ask for a kept unit's
// address the page does not list (a unit the delay still holds).
var StreamID = streamID

// MaxClubStateTiles is the bound of a club's ports known by their state alone.
const MaxClubStateTiles = maxClubStateTiles
