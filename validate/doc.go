// Package validate checks nearest-reference answers against a float64
// haversine brute force.
//
// The exactness contract of geoknn is stated in metres on a sphere of radius
// sphere.EarthRadiusMetres: for every observation the returned reference is at most
// Tolerance farther than the true nearest, and the reported distance is within
// Tolerance of the float64 haversine distance to the returned reference. Any
// reference at the minimum distance is a right answer; BruteForce breaks exact
// ties to the lowest index, and the checkers count a different but equally
// near (within Tolerance) answer as a tie, not as an error.
//
// Points are orb.Point{lon, lat} in degrees; distances exchanged with engines
// are central angles in radians.
package validate
